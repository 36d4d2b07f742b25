"""The one place that decides splits: names, and which example goes to eval."""

import hashlib

TRAIN, EVAL = 'train', 'eval'
SPLITS = (TRAIN, EVAL)
INFER = 'infer'  # the one split of unlabeled examples (run --infer-data)


def shares(eval_percent: int) -> tuple:
  """((TRAIN, percent), (EVAL, percent)): the split as proportions of 100."""
  return ((TRAIN, 100 - eval_percent), (EVAL, eval_percent))


def path_hash(key: str) -> int:
  """A stable 64-bit hash of a relative path or row key (the same on every machine and run)."""
  return int.from_bytes(hashlib.md5(key.encode('utf-8')).digest()[:8], 'big')


def is_eval(key: str, eval_percent: int) -> bool:
  """Deterministic split: the key's hash decides, so re-runs keep their split."""
  return path_hash(key) % 100 < eval_percent


def split_of(key: str, eval_percent: int) -> str:
  return EVAL if is_eval(key, eval_percent) else TRAIN
