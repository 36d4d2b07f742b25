"""The one place that decides splits: names, which example goes to eval, and when content filed
under two labels stays out of both."""

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


# Content filed under two labels is taken for mislabelled copies, and left out of both splits,
# only while it is rare: at most this share of the examples, or a handful (a photo copied into a
# second class folder, in a small data set). Above both the features do not decide
# the label (a table of a few categorical columns, a label with noise in it: 531 of 600 rows of a
# Titanic-like table, 9,909 of 14,996 taxi trips on `fare > 10`), and leaving the rows out would
# train on what is left and evaluate on a sliver: every example is kept, each set of identical
# content in one split, and the summary says the label is noisy.
MAX_CONFLICT_SHARE = 0.02
FEW_CONFLICTS = 10  # examples (5 copies filed twice): left out in data of any size


def conflicts_left_out(conflicts: int, examples: int) -> bool:
  """Whether `conflicts` examples of `examples` are few enough to be mislabelled copies."""
  return conflicts <= max(MAX_CONFLICT_SHARE * examples, FEW_CONFLICTS)
