"""Tokenizer, vocabulary and label order of the text route (contracts/text_record.py has the
record layout)."""

import re
from typing import Iterable, List

from contracts.text_record import RESERVED

_MARKUP = re.compile(r'<[^>]{0,40}>')  # <br /> and friends in scraped reviews
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters/digits of any script, with one apostrophe


def tokenize(text: str) -> List[str]:
  """Lower-cased words; markup and punctuation dropped."""
  return _WORD.findall(_MARKUP.sub(' ', text).lower())


def vocabulary(counts: Iterable[tuple], size: int, min_count: int) -> List[str]:
  """The reserved entries, then the `size` most frequent words seen ≥ min_count times (ties in
  alphabetical order, so the same counts give the same ids)."""
  kept = sorted(((word, n) for word, n in counts if n >= min_count), key=lambda c: (-c[1], c[0]))
  return list(RESERVED) + [word for word, _ in kept[:size]]


def label_order(values: Iterable[str]) -> List[str]:
  """Label names in id order: numerically when every label is an integer, else alphabetically."""
  names = sorted(set(values))
  if all(re.fullmatch(r'-?\d+', n) for n in names):
    names.sort(key=int)
  return names
