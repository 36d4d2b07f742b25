"""Grouping at scale for bench/near_duplicates.py: duplicates.group over the hashes of 100,000
images, and duplicates.near_pairs against its first version (the benchmark's docstring)."""

import statistics
import time
import tracemalloc

import numpy as np
import PIL.Image

from bench.near_duplicate_images import brightened, mosaic


def scale_sets(photos, count: int, rng):
  """{'distinct': (content, labels, near), 'views': (...)} of `count` images each (near: (n, 2),
  as loaded and mirrored)."""
  from components.image_example_gen import encode

  near, content, labels = [], [], []
  while len(near) < count:
    image = mosaic(photos, rng, 32)
    label = int(rng.integers(10))
    near.append(encode.near_hashes(image))
    content.append(int(rng.integers(1 << 63)))
    labels.append(label)
    if len(near) % 10 == 1:  # an edited copy
      cut = round(image.width * 0.03)
      copy = brightened(image.crop((cut, 0, image.width, image.height - cut)), 1.1)
      near.append(encode.near_hashes(copy))
      content.append(int(rng.integers(1 << 63)))
      labels.append(label)
    if len(near) % 50 == 2:  # an exact copy
      near.append(near[-1])
      content.append(content[-1])
      labels.append(label)
  distinct = (
    np.array(content[:count], dtype=np.uint64),
    np.array(labels[:count]),
    np.array(near[:count], dtype=np.uint64).reshape(-1, 2),
  )
  views = []
  for i in range(count):
    photo = photos[i % len(photos)][1]
    width = int(rng.integers(48, photo.size[0] + 1))
    height = int(np.clip(width * rng.uniform(0.6, 1.6), 48, photo.size[1]))
    left = int(rng.integers(0, photo.size[0] - width + 1))
    top = int(rng.integers(0, photo.size[1] - height + 1))
    image = photo.crop((left, top, left + width, top + height))
    if rng.random() < 0.5:
      image = image.transpose(PIL.Image.FLIP_LEFT_RIGHT)
    views.append(encode.near_hashes(image))
  views = np.array(views, dtype=np.uint64).reshape(-1, 2)
  return {
    'distinct': distinct,
    'views': (
      rng.integers(0, 1 << 63, size=count).astype(np.uint64),
      np.arange(count) % len(photos),
      views,
    ),
  }


def near_pairs_exact_pieces(hashes, max_distance):
  """What duplicates.near_pairs did first (same result): max_distance + 1 pieces, two hashes within
  max_distance bits agree on one piece whole; every pair inside a piece's bucket is compared."""
  from components.duplicates import distance

  hashes = np.asarray(hashes, dtype=np.uint64)
  if max_distance <= 0 or len(hashes) < 2:
    return np.zeros((0, 2), dtype=np.int64)
  bounds = np.linspace(0, 64, max_distance + 2).astype(int)
  found = []
  for low, high in zip(bounds[:-1], bounds[1:]):
    piece = (hashes >> np.uint64(low)) & np.uint64((1 << (high - low)) - 1)
    order = np.argsort(piece, kind='stable')
    sorted_piece = piece[order]
    starts = np.flatnonzero(np.r_[True, sorted_piece[1:] != sorted_piece[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    for offset in range(1, int(sizes.max(initial=1))):
      members = np.flatnonzero(sizes > offset)
      if not len(members):
        break
      first = np.concatenate([np.arange(starts[m], starts[m] + sizes[m] - offset) for m in members])
      i, j = order[first], order[first + offset]
      close = distance(hashes[i], hashes[j]) <= max_distance
      found.append(np.stack([np.minimum(i, j)[close], np.maximum(i, j)[close]], axis=1))
  if not found:
    return np.zeros((0, 2), dtype=np.int64)
  return np.unique(np.concatenate(found), axis=0)


def grouping_at_scale(sets, sizes, rounds):
  from components import duplicates

  figures = {}
  content, labels, near = sets['distinct']
  duplicates.group(content[:1000], labels[:1000], near[:1000])  # imports (scipy.sparse) untimed
  for name, (content, labels, near) in sets.items():
    seconds = {n: [] for n in sizes}
    for _ in range(rounds):
      for n in sizes:
        started = time.perf_counter()
        g = duplicates.group(content[:n], labels[:n], near[:n])
        seconds[n].append(time.perf_counter() - started)
    peaks, shapes = {}, {}
    for n in sizes:
      tracemalloc.start()
      g = duplicates.group(content[:n], labels[:n], near[:n])
      peaks[n] = tracemalloc.get_traced_memory()[1] / 1e6
      tracemalloc.stop()
      sizes_of = np.bincount(g.group)
      shapes[n] = {
        'in_groups': float((sizes_of[g.group] > 1).mean()),
        'largest_group': int(sizes_of.max()),
        'conflicted': float(g.conflicted.mean()),
      }
    small, large = sizes[0], sizes[-1]
    per_image = {n: statistics.median(s) / n * 1e6 for n, s in seconds.items()}
    rounds_ratio = [
      (seconds[large][r] / large) / (seconds[small][r] / small) for r in range(rounds)
    ]
    figures[name] = {
      'seconds': {str(n): statistics.median(s) for n, s in seconds.items()},
      'us_per_image': {str(n): v for n, v in per_image.items()},
      'peak_traced_mb': {str(n): v for n, v in peaks.items()},
      'groups': {str(n): v for n, v in shapes.items()},
      'per_image_ratio': per_image[large] / per_image[small],
      'per_image_ratio_rounds': [min(rounds_ratio), max(rounds_ratio)],
    }
  # near_pairs alone at the largest size (every hash: as loaded and mirrored), by threshold,
  # against its first version.
  unique = np.unique(sets['distinct'][2][: sizes[-1]].ravel())
  check = np.unique(sets['distinct'][2][: sizes[0]].ravel())
  figures['near_pairs_distinct'] = {}
  for t in (4, 6, 8):
    assert np.array_equal(duplicates.near_pairs(check, t), near_pairs_exact_pieces(check, t))
    started = time.perf_counter()
    pairs = duplicates.near_pairs(unique, t)
    middle = time.perf_counter()
    whole = near_pairs_exact_pieces(unique, t)
    ended = time.perf_counter()
    assert len(pairs) == len(whole)
    figures['near_pairs_distinct'][str(t)] = {
      'pairs': len(pairs),
      'near_pairs_s': middle - started,
      'exact_pieces_s': ended - middle,
    }
  return figures
