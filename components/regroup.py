"""After an ExampleGen's shard writers: which records share content (components/duplicates.py), and
the records moved to where grouping says they belong or left out: the image ExampleGen's
(`Placed`: every image's split decided again) and the CSV ExampleGen's (`csv_rows`: the rows
filed under two labels left out)."""

import collections
import io
import os
from typing import Dict, List, NamedTuple, Tuple

import numpy as np
from tfx.dsl.io import fileio

from components import duplicates, grouped_split
from contracts import artifacts
from records import image_folder


class Placed:
  """Where the shard writers put each image (per shard, per split file, in order), and where
  grouping says it belongs."""

  def __init__(self, written: List[Dict[str, list]], split_names: List[str]):
    self._entries = [  # (shard, split written to, path, label, content, near)
      (index, split, *item)
      for index, by_split in enumerate(written)
      for split in split_names
      for item in by_split[split]
    ]
    self._final = [entry[1] for entry in self._entries]
    self._split_names = split_names

  def regroup(self, eval_percent: int, mode: str, labels: List[str]) -> 'Regrouped':
    """Groups duplicates (duplicates.group); the final split of every image."""
    if not self._entries:
      return Regrouped({}, [], {})
    _, _, paths, label_ids, content, near = zip(*self._entries)
    grouping = duplicates.group(content, label_ids, near)
    keep_conflicts = not duplicates.conflicts_left_out(
      mode, int(grouping.conflicted.sum()), len(content)
    )
    self._final = duplicates.assigned_splits(grouping, eval_percent, keep_conflicts)
    names = [labels[i] for i in label_ids]
    reasons = duplicates.conflict_reasons(grouping, paths, names)
    excluded = [] if keep_conflicts else [(paths[i], why) for i, why in sorted(reasons.items())]
    listing = {
      'largest_groups': [
        [{'path': paths[i], 'label': names[i], 'split': self._final[i]} for i in members]
        for members in grouping.largest
      ],
      'conflicts': [
        {'path': paths[i], 'label': names[i], 'reason': why} for i, why in sorted(reasons.items())
      ],
    }
    return Regrouped(duplicates.summary_facts(grouping, mode), excluded, listing)

  def moves(self) -> Dict[int, Tuple[List[str], List[List[str]]]]:
    """{shard: (its split files, each record's new split in order)} of the shards where an image
    moves or is left out."""
    changed = {e[0] for e, final in zip(self._entries, self._final) if final != e[1]}
    routes = {i: {s: [] for s in self._split_names} for i in changed}
    for entry, final in zip(self._entries, self._final):
      if entry[0] in changed:
        routes[entry[0]][entry[1]].append(final)
    return {i: (list(by_split), list(by_split.values())) for i, by_split in routes.items()}

  def reroute(self, uri: str, shards: int, gzip: bool) -> None:
    """Moves the records of every shard where an image moves or is left out (moves())."""
    for index, (sources, routes) in self.moves().items():
      targets = {s: artifacts.shard_path(uri, s, index, shards, gzip) for s in self._split_names}
      duplicates.reroute([targets[s] for s in sources], routes, targets)

  def empty_files(self, uri: str, shards: int, gzip: bool, split: str) -> set:
    """The split's shard files left without a record."""
    used = {e[0] for e, final in zip(self._entries, self._final) if final == split}
    return {artifacts.shard_path(uri, split, i, shards, gzip) for i in range(shards)} - {
      artifacts.shard_path(uri, split, i, shards, gzip) for i in used
    }

  def counts(self) -> Dict[str, Dict]:
    """{'split': {split: images}, 'class': {label id: images}} of the images kept."""
    per_split = collections.Counter(self._final)
    per_class = collections.Counter(
      e[3]
      for e, final in zip(self._entries, self._final)
      if final and e[3] != image_folder.UNLABELED
    )
    return {'split': {s: per_split[s] for s in self._split_names}, 'class': per_class}


class Regrouped(NamedTuple):
  counts: Dict[str, int]  # duplicates.summary_facts: custom properties of the Examples artifact
  excluded: List[Tuple[str, str]]  # (path, reason) of the conflicts left out
  listing: Dict[str, list]  # duplicates.json: the largest groups and the conflicts


def csv_rows(uri, tasks, outputs, gzip, rows, mode, label, ids, presplit: bool) -> dict:
  """The CSV ExampleGen's rows (each task's `<rows>-<split>-<shard>.npz`: content, labels, chosen
  output; tasks as its executor numbers them: input split, file, …, shard, shard count): rows
  whose content is filed under two labels found and, unless they are kept, the shards that hold
  them rewritten without them. Already split input: the rows whose content is in more than one
  split counted. Returns grouped_split.record's facts."""
  saved = []
  for task in tasks:
    with fileio.open(f'{rows}-{task[0]}-{task[5]:05d}.npz', 'rb') as f:
      saved.append(dict(np.load(io.BytesIO(f.read()), allow_pickle=False)))
  content = np.concatenate([s['content'] for s in saved]).astype(np.uint64)
  labels = np.concatenate([s['labels'] for s in saved]).tolist()
  grouping = duplicates.group(content, labels)
  facts = {
    'examples': len(content),
    'duplicates': grouping.duplicates,
    'left_out': dict.fromkeys(outputs, 0),
  }
  if presplit:  # already split: nothing moves; rows whose content is in two splits are counted
    given = [task[0] for task, s in zip(tasks, saved) for _ in range(len(s['content']))]
    across = [c for c, _ in duplicates.across_splits(content, given)]
    facts['across_splits'] = int(np.isin(content, np.array(across, dtype=np.uint64)).sum())
    return facts
  facts['conflicts'] = int(grouping.conflicted.sum())
  if not facts['conflicts'] or not duplicates.conflicts_left_out(
    mode, facts['conflicts'], len(content)
  ):
    return facts
  describe = grouped_split.Fingerprint(label, ids, sequence=False)
  labels_of = {}
  for g, row_label, bad in zip(grouping.group.tolist(), labels, grouping.conflicted.tolist()):
    if bad:
      labels_of.setdefault(g, set()).add(row_label)
  conflicting, start = [], 0
  for task, s in zip(tasks, saved):
    bad = grouping.conflicted[start : start + len(s['content'])]
    groups = grouping.group[start : start + len(s['content'])]
    start += len(s['content'])
    if not bad.any():
      continue
    targets = {o: artifacts.shard_path(uri, o, task[5], task[6], gzip) for o in outputs}
    in_order = [np.flatnonzero(s['chosen'] == number) for number in range(len(outputs))]
    routes = [['' if bad[row] else o for row in rows] for o, rows in zip(outputs, in_order)]
    for o, route in zip(outputs, routes):
      facts['left_out'][o] += route.count('')
    left_out_groups = [groups[row] for rows in in_order for row in rows if bad[row]]
    for record, g in zip(
      duplicates.reroute(list(targets.values()), routes, targets), left_out_groups
    ):
      row_label, description, _ = describe(record)[1]
      where = f'{os.path.basename(task[1])}: {description}'
      conflicting.append({'row': where, 'label': row_label, 'labels': sorted(labels_of[g])})
  facts['conflicting'] = conflicting[: grouped_split.SHOWN]
  return facts
