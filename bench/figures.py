"""What every benchmark does with its figures besides printing them."""

import json
from typing import Optional


def save(figures: dict, path: Optional[str]) -> None:
  """Writes the figures as JSON when a path was given (--json)."""
  if path:
    with open(path, 'w') as f:
      json.dump(figures, f, indent=2)
