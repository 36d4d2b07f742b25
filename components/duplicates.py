"""Never train on the eval data: examples with the same content, or images that are near-copies of
each other, are grouped and each group goes to one split; content filed under two labels is a
conflict, kept out of both splits while such examples are rare (contracts/splits.py; unless asked
otherwise), else kept in one split as a noisy label. Shared by every ExampleGen; no TFX.

An example's content is a 64-bit fingerprint of everything but its label and id (images: the
decoded, upright pixels; rows and tf.Examples: every other feature). Images also carry two 64-bit
perceptual hashes, as loaded and mirrored left to right (encode.near_hashes): two images are
near-duplicates (a resized, re-encoded, slightly cropped, brightened or mirrored copy) when a hash
of one is within NEAR_DISTANCE bits of a hash of the other (both are checked: near_rows). Groups are the
connected components of "same content or near-duplicate"; a group's split is decided by the
smallest content fingerprint in it, so it is stable across runs and names.

Near pairs are found by multi-index hashing (near_pairs): only hashes that agree on some piece of
their bits, or nearly, are compared. Cost grows with the bucket sizes, not with n²
(docs/benchmarks.md: 100,000 images).
"""

import collections
import struct
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from contracts import splits
from contracts.task_defaults import GROUP, KEEP_CONFLICTS

# What an ExampleGen does with duplicates (run --duplicates): GROUP keeps each group in one split and
# leaves conflicts out while they are rare (splits.conflicts_left_out); KEEP_CONFLICTS also trains and evaluates on them (in one split); OFF splits
# by name / row hash alone, as before grouping existed (bench/example_gen.py measures the cost).
OFF = 'off'  # GROUP, KEEP_CONFLICTS: contracts/task_defaults.py (a regression keeps conflicts)
MODES = (GROUP, KEEP_CONFLICTS, OFF)

# Largest Hamming distance between two near-duplicates' perceptual hashes (of 64 bits): chosen from
# bench/near_duplicates.py's measurement (docs/benchmarks.md, "Near-duplicate images").
NEAR_DISTANCE = 4
# The other examples (and their labels) a conflict's reason names, at most.
SHOWN = 3

_POPCOUNT = np.array([bin(i).count('1') for i in range(256)], dtype=np.uint8)


def split_key(content: int) -> str:
  """The key contracts.splits hashes for an example (or group) of this content."""
  return f'{content:016x}'


def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """Bits that differ between uint64 arrays a and b (element-wise)."""
  x = np.ascontiguousarray(np.bitwise_xor(a, b), dtype=np.uint64)
  return _POPCOUNT[x.view(np.uint8)].reshape(-1, 8).sum(axis=1)


def _expand(low: np.ndarray, high: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
  """All indexes low[k]..high[k]-1, concatenated, and for each the k it came from."""
  counts = high - low
  owner = np.repeat(np.arange(len(low)), counts)
  starts = np.cumsum(counts) - counts
  return low[owner] + (np.arange(int(counts.sum())) - starts[owner]), owner


def near_pairs(hashes: np.ndarray, max_distance: int = NEAR_DISTANCE) -> np.ndarray:
  """(k, 2) index pairs i < j of `hashes` (uint64; equal ones are a pair) within max_distance bits.

  max_distance // 2 + 1 pieces: two hashes within max_distance bits differ in at most one bit of
  some piece (pigeonhole), so each hash looks up, in that piece's sorted values, its own value and
  the values one bit away; only those candidates are compared whole."""
  hashes = np.asarray(hashes, dtype=np.uint64)
  count = len(hashes)
  if max_distance <= 0 or count < 2:
    return np.zeros((0, 2), dtype=np.int64)
  bounds = np.linspace(0, 64, max_distance // 2 + 2).astype(int)
  found = []
  for low, high in zip(bounds[:-1], bounds[1:]):
    piece = (hashes >> np.uint64(low)) & np.uint64((1 << (high - low)) - 1)
    order = np.argsort(piece, kind='stable')
    sorted_piece = piece[order]
    for flip in [0] + [1 << k for k in range(high - low)]:
      # A pair one bit apart is looked up from the hash whose flipped bit is 0 only.
      probing = np.arange(count) if flip == 0 else np.flatnonzero((piece & np.uint64(flip)) == 0)
      value = piece[probing] ^ np.uint64(flip)
      position, owner = _expand(
        np.searchsorted(sorted_piece, value, 'left'), np.searchsorted(sorted_piece, value, 'right')
      )
      i, j = probing[owner], order[position]
      if flip == 0:
        i, j = i[i < j], j[i < j]
      close = distance(hashes[i], hashes[j]) <= max_distance
      found.append(np.stack([np.minimum(i, j)[close], np.maximum(i, j)[close]], axis=1))
  return np.unique(np.concatenate(found), axis=0)


def near_rows(hashes: np.ndarray, max_distance: int = NEAR_DISTANCE) -> np.ndarray:
  """(k, 2) row pairs i < j of `hashes` ((m, h) uint64: an image's h hashes per row, as loaded
  and mirrored) where some hash of row i is within max_distance bits of some hash of row j.

  Every hash is looked up, not one per image (the smaller, say): an image whose two hashes are
  close in value can keep the one and its mirrored copy the other."""
  width = hashes.shape[1]
  pairs = near_pairs(hashes.ravel(), max_distance) // width
  pairs = pairs[pairs[:, 0] != pairs[:, 1]]  # an image's own two hashes
  return np.unique(np.sort(pairs, axis=1), axis=0).reshape(-1, 2)


def near_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """Per row of a and b ((n, h) uint64, as near_rows takes them): the fewest bits between a hash
  of a's row and a hash of b's."""
  a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
  return np.min(
    [distance(a[:, i], b[:, j]) for i in range(a.shape[1]) for j in range(b.shape[1])], axis=0
  )


class Grouping(NamedTuple):
  group: np.ndarray  # per example: its group's id (0..groups-1)
  split_key: List[str]  # per example: the key contracts.splits decides its split by
  conflicted: np.ndarray  # per example: its content (or a near-copy of it) has another label
  duplicates: int  # examples in a group with another example of the same content
  near_groups: int  # groups holding more than one distinct content (near-duplicates)
  largest: List[List[int]]  # the largest groups (examples' indexes), largest first


def group(
  content: Sequence[int],
  labels: Sequence,
  near: Optional[Sequence[int]] = None,
  max_distance: int = NEAR_DISTANCE,
  largest: int = 10,
) -> Grouping:
  """Groups examples by content (and near hashes, where given: images, one or more per example,
  as near_rows takes them) and finds the conflicts: an example whose content, or a
  near-duplicate's, is filed under a different label."""
  from scipy.sparse import coo_matrix
  from scipy.sparse.csgraph import connected_components

  content = np.asarray(content, dtype=np.uint64)
  count = len(content)
  if not count:
    return Grouping(np.zeros(0, int), [], np.zeros(0, bool), 0, 0, [])
  # Classes of identical near hashes (images) or of identical content (rows): the nodes that pairs
  # join; an example belongs to exactly one.
  keys = content if near is None else np.asarray(near, dtype=np.uint64)
  if near is None:  # one key a row: the 1-D unique (axis=0 sorts rows as records: 1.2x slower)
    distinct, klass = np.unique(keys, return_inverse=True)
  else:
    distinct, klass = np.unique(keys.reshape(count, -1), axis=0, return_inverse=True)
  klass = klass.reshape(-1)
  pairs = near_rows(distinct, max_distance) if near is not None else np.zeros((0, 2), int)
  # Same content in two classes can only happen with hash collisions; join them too.
  contents, by_content, per_content = np.unique(content, return_inverse=True, return_counts=True)
  rows = np.r_[klass, pairs[:, 0]]
  cols = np.r_[len(distinct) + by_content, pairs[:, 1]]
  nodes = len(distinct) + len(contents)
  graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(nodes, nodes))
  _, component = connected_components(graph, directed=False)
  group_of = np.unique(component[klass], return_inverse=True)[1]

  # A class is in conflict when it holds two labels, or is near a class of another label.
  _, label_of = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
  class_labels = np.unique(np.stack([klass, label_of], axis=1), axis=0)
  multiple = np.bincount(class_labels[:, 0], minlength=len(distinct)) > 1
  single = np.zeros(len(distinct), dtype=np.int64)
  single[class_labels[:, 0]] = class_labels[:, 1]
  a, b = pairs[:, 0], pairs[:, 1]
  apart = multiple[a] | multiple[b] | (single[a] != single[b])
  bad = multiple.copy()
  bad[a[apart]] = True
  bad[b[apart]] = True

  # A group's key: its smallest content, so the split never depends on names or order.
  order = np.lexsort((content, group_of))
  firsts = order[np.r_[True, group_of[order][1:] != group_of[order][:-1]]]
  key_of_group = [split_key(int(c)) for c in content[firsts]]
  sizes = np.bincount(group_of)
  contents_per_group = np.bincount(
    np.unique(np.stack([group_of, by_content], axis=1), axis=0)[:, 0]
  )
  biggest = [g for g in np.argsort(-sizes, kind='stable')[:largest] if sizes[g] > 1]
  return Grouping(
    group=group_of,
    split_key=[key_of_group[g] for g in group_of.tolist()],
    conflicted=bad[klass],
    duplicates=int(per_content[per_content > 1].sum()),
    near_groups=int((contents_per_group > 1).sum()),
    largest=[np.flatnonzero(group_of == g).tolist() for g in biggest],
  )


def conflicts_left_out(mode: str, conflicts: int, examples: int) -> bool:
  """Whether an ExampleGen in `mode` leaves out the `conflicts` of its `examples`: GROUP does
  while they are rare enough to be mislabelled copies."""
  return mode == GROUP and splits.conflicts_left_out(conflicts, examples)


def conflict_properties(mode: str, conflicts: int, examples: int) -> Dict[str, int]:
  """The Examples artifact's conflict properties: how many, whether kept, whether kept because
  they are too many to be mislabelled copies (a noisy label)."""
  left_out = conflicts_left_out(mode, conflicts, examples)
  return {
    'num_label_conflicts': int(conflicts),
    'label_conflicts_kept': int(not left_out),
    'label_noisy': int(mode == GROUP and not left_out),
  }


def assigned_splits(grouping: Grouping, eval_percent: int, keep_conflicts: bool) -> List[str]:
  """Per example: its split, or '' when it is a conflict left out."""
  split_of = {key: splits.split_of(key, eval_percent) for key in set(grouping.split_key)}
  return [
    '' if bad and not keep_conflicts else split_of[key]
    for key, bad in zip(grouping.split_key, grouping.conflicted.tolist())
  ]


def conflict_reasons(
  grouping: Grouping, names: Sequence[str], labels: Sequence[str]
) -> Dict[int, str]:
  """{example index: why it is a conflict}, naming the other examples of its group and their
  labels ('same content as b.jpg labelled 'dog'')."""
  members = collections.defaultdict(list)
  for i in np.flatnonzero(grouping.conflicted).tolist():
    members[int(grouping.group[i])].append(i)
  reasons = {}
  for group_members in members.values():
    for i in group_members:
      others = [j for j in group_members if labels[j] != labels[i]][:SHOWN]
      reasons[i] = 'same content under another label: ' + ', '.join(
        f'{names[j]} ({labels[j]})' for j in others
      )
  return reasons


def summary_facts(grouping: Grouping, mode: str) -> Dict[str, int]:
  """The counts an Examples artifact records (custom properties) and the summary shows."""
  return {
    'num_duplicates': int(grouping.duplicates),
    'num_near_duplicate_groups': int(grouping.near_groups),
    **conflict_properties(mode, int(grouping.conflicted.sum()), len(grouping.conflicted)),
  }


def across_splits(content: Sequence[int], given_splits: Sequence[str]) -> List[Tuple[int, set]]:
  """Already split data: (content, the splits it is in) of every content found in more than
  one split."""
  where: Dict[int, set] = collections.defaultdict(set)
  for c, s in zip(content, given_splits):
    where[int(c)].add(s)
  return [(c, found) for c, found in where.items() if len(found) > 1]


def _spans(data) -> List[Tuple[int, int]]:
  """(start, end) of each record in TFRecord bytes: length (8 bytes), its CRC (4), the record,
  the record's CRC (4)."""
  spans, position = [], 0
  while position < len(data):
    (length,) = struct.unpack_from('<Q', data, position)
    spans.append((position, position + length + 16))
    position += length + 16
  return spans


def reroute(
  sources: Sequence[str], routes: Sequence[Sequence[str]], targets: Dict[str, str]
) -> List[bytes]:
  """Rewrites one shard's split files: record k of sources[i] goes to targets[routes[i][k]]
  ('' : left out). Records are copied as bytes, CRCs and all (nothing is parsed: ~1 µs a
  record). Every target is written under a temporary name and renamed into place, so a shard is
  never half-written; sources may be among the targets. Returns the records left out."""
  import gzip
  import uuid

  from tfx.dsl.io import fileio

  compressed = any(path.endswith('.gz') for path in targets.values())
  pieces = {split: [] for split in targets}
  left_out = []
  for source, route in zip(sources, routes):
    with fileio.open(source, 'rb') as f:
      data = f.read()
    data = memoryview(gzip.decompress(data) if compressed else data)
    for (start, end), split in zip(_spans(data), route):
      if split:
        pieces[split].append(data[start:end])
      else:
        left_out.append(bytes(data[start + 12 : end - 4]))
  partial = {split: f'{path}.partial-{uuid.uuid4().hex}' for split, path in targets.items()}
  for split, path in partial.items():
    content = b''.join(pieces[split])
    with fileio.open(path, 'wb') as f:
      f.write(gzip.compress(content, compresslevel=6) if compressed else content)
  for split, path in partial.items():  # complete files only, under their final names
    fileio.rename(path, targets[split], overwrite=True)
  return left_out
