"""The ImageExampleGen's side files beside its shards (labels.txt, excluded_files.csv,
image_meta.json) and the check that at least two classes kept an image."""

import collections
import csv
import io
import json
import os
from typing import Any, Dict, List, Tuple

from contracts import artifacts, image_record
from contracts.errors import UnusableData
from records import image_folder
from utils import atomic


def check_classes(meta: Dict[str, Any], excluded_csv: str) -> None:
  """Raises UnusableData when fewer than two classes kept an image (the rest excluded)."""
  kept = [name for name, n in meta['examples_per_class'].items() if n]
  if len(kept) < 2:
    raise UnusableData(
      f'{"only class " + repr(kept[0]) if kept else "no class"} has images that decode: '
      f'{len(meta["excluded"])} file(s) excluded ({excluded_csv}); '
      'a classifier needs at least two classes'
    )


def write_side_files(
  uri: str,
  listing: image_folder.FolderListing,
  counted: List[Tuple[tuple, int]],
  kept: Dict[str, Dict],
  encoding: str,
  compression: str,
  max_side: int,
) -> Dict[str, Any]:
  """Writes labels.txt, excluded_files.csv and image_meta.json; returns the meta. kept:
  regroup.Placed.counts()."""
  split_counts = kept['split']
  per_class = {listing.labels[label]: n for label, n in kept['class'].items()}
  sizes, channels = collections.Counter(), collections.Counter()
  turned_upright = 0
  excluded = sorted(listing.others)
  for fact, n in counted:
    kind = fact[0]
    if kind == 'size':
      sizes[(fact[1], fact[2])] = n
    elif kind == 'channels':
      channels[fact[1]] = n
    elif kind == 'turned_upright':
      turned_upright = n
    else:
      excluded.append((fact[1], fact[2]))
  excluded.sort()
  (height, width), _ = sizes.most_common(1)[0] if sizes else ((0, 0), 0)
  meta = {
    'schema_version': image_record.SCHEMA_VERSION,
    'encoding': encoding,
    'compression': compression,
    'max_image_side': max_side,
    'labels': listing.labels,
    'split_counts': split_counts,
    'examples_per_class': {name: per_class.get(name, 0) for name in listing.labels},
    'most_common_size': [height, width],
    'uniform_size': len(sizes) == 1,
    'channels_seen': sorted(channels),
    'excluded': len(excluded),
    artifacts.TURNED_UPRIGHT: turned_upright,  # EXIF-oriented (encode.py)
  }
  table = io.StringIO()
  writer = csv.writer(table)
  writer.writerow(['path', 'reason'])
  writer.writerows(excluded)
  atomic.write(
    os.path.join(uri, artifacts.LABELS_FILE), ''.join(name + '\n' for name in listing.labels)
  )
  atomic.write(os.path.join(uri, artifacts.EXCLUDED_FILE), table.getvalue())
  # Last: the Trainer reads image_meta.json first, so it also marks the artifact as complete.
  atomic.write(os.path.join(uri, artifacts.IMAGE_META_FILE), json.dumps(meta, indent=2))
  return dict(meta, excluded=excluded)
