"""Columns that identify a row rather than describe it: an integer or string column whose value is
present and different in every row, over all the rows an ExampleGen reads (floats are
measurements, never ids). Without --id-column they are treated as ids (docs/design/data.md): left
out of a row's content, so that copies of a row under other ids share a split, and out of the
model's inputs (`ID_COLUMNS_FILE` in the Examples artifact, read by the Trainer); the run's summary
names them. A column of dates or times (contracts/dates.py) is never an id: a unique timestamp
describes its row (docs/data.md, Dates and times). Shared by the Arrow CSV ExampleGen and TFX's (components/grouped_split.py)."""

import json
import os
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import apache_beam as beam

from contracts import artifacts, dates
from utils import atomic

# Fewer rows than this: any column may hold different values in every row by chance.
MIN_ROWS = 20

# Cells of a column looked at for dates (its first ones in a range).
DATE_SAMPLE = 200


def dated(cells: Sequence[str]) -> bool:
  """Whether a column's cells (its first DATE_SAMPLE looked at) are dates: no id."""
  return dates.column(list(cells)[:DATE_SAMPLE]) is not None


# A batch of rows: (row count, {column: its value in each row, None where a row has none}).
Batch = Tuple[int, Dict[str, Optional[Sequence]]]


class UniqueColumns(beam.CombineFn):
  """Batches of rows → the columns whose values are present and unique in every row (sorted);
  a column is dropped as soon as a value comes twice or a row lacks it."""

  def create_accumulator(self) -> list:
    return [0, {}]  # rows, {column: its values so far, None once dropped}

  def add_input(self, seen: list, batch: Batch) -> list:
    rows, values = batch
    for column in set(seen[1]) - set(values):  # absent from these rows
      seen[1][column] = None
    for column, found in values.items():
      known = seen[1].get(column, set() if not seen[0] else None)
      if known is None or found is None:
        seen[1][column] = None
        continue
      size = len(known)
      known.update(found)
      seen[1][column] = known if len(known) == size + len(found) else None
    seen[0] += rows
    return seen

  def merge_accumulators(self, accumulators: Iterable[list]) -> list:
    merged = self.create_accumulator()
    for rows, values in accumulators:
      merged = self.add_input(merged, (rows, values))
    return merged

  def extract_output(self, seen: list) -> List[str]:
    rows, values = seen
    return sorted(c for c, known in values.items() if known is not None and rows >= MIN_ROWS)


def record(examples, given: Sequence[str], detected: Sequence[str]) -> None:
  """The id columns as the Examples artifact's property and ID_COLUMNS_FILE (for the Trainer)."""
  examples.set_string_custom_property(artifacts.DETECTED_ID_COLUMNS, json.dumps(list(detected)))
  ids = {'given': list(given), 'detected': list(detected)}
  atomic.write(os.path.join(examples.uri, artifacts.ID_COLUMNS_FILE), json.dumps(ids))
