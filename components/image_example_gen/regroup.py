"""After the shard writers: where each image was written, where grouping its copies and
near-copies (components/duplicates.py) says it belongs, and the records moved there."""

import collections
from typing import Dict, List, NamedTuple, Tuple

from components import duplicates
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
