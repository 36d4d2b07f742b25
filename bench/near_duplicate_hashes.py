"""The candidate hashes of bench/near_duplicates.py, put in encode.near_hashes's place, and the
arithmetic on the hashes they give: distances of every pair, crop windows' overlap, shares
within each threshold. A candidate gives an image's hashes as encode.near_hashes does, (as
loaded, mirrored); one with a single hash gives it twice."""

import contextlib
import functools

import numpy as np
import PIL.Image

THRESHOLDS = (2, 4, 6, 8, 10)


def dhash_9x8(image) -> int:
  """The difference hash near_hashes replaced: 9x8 grey (box), is the right neighbour brighter."""
  from contracts.image_files import normalised_mode

  small = image.resize((9, 8), PIL.Image.BOX, reducing_gap=2.0)
  grey = np.asarray(normalised_mode(small).convert('L'), dtype=np.int16)
  return int(np.packbits((grey[:, 1:] > grey[:, :-1]).ravel()).view('>u8')[0])


@functools.lru_cache(maxsize=None)
def _dct32():
  x = np.arange(32)
  return np.cos(np.pi * (2 * x[None, :] + 1) * np.arange(8)[:, None] / 64).astype(np.float32)


def phash_32x32(image) -> int:
  """The classic pHash: grey resampled to 32x32 (box), 8x8 lowest DCT coefficients, median."""
  from contracts.image_files import normalised_mode

  grey = np.asarray(
    normalised_mode(image).convert('L').resize((32, 32), PIL.Image.BOX), dtype=np.float32
  )
  low = (_dct32() @ grey @ _dct32().T).ravel()
  return int(np.packbits(low > np.median(low)).view('>u8')[0])


def _smaller_of_two(near_hashes):
  """What near_hashes replaced (issue 60): the smaller of the image's and its mirror's hash."""
  return lambda image: (min(near_hashes(image)),) * 2


def _single(function):
  return lambda image: (function(image),) * 2


def candidates(names=None):
  """{name: hash function}: every candidate, or those named."""
  from components.image_example_gen import encode

  every = {
    'near_hashes': encode.near_hashes,
    'smaller_of_two': _smaller_of_two(encode.near_hashes),
    'dhash_9x8': _single(dhash_9x8),
    'phash_32x32': _single(phash_32x32),
  }
  return {name: f for name, f in every.items() if not names or name in names}


@contextlib.contextmanager
def hashing_with(function):
  from components.image_example_gen import encode

  kept = encode.near_hashes
  encode.near_hashes = function
  try:
    yield
  finally:
    encode.near_hashes = kept


def stored(datas):
  """(content, near) arrays of encode_file over encoded images (near: (n, 2))."""
  from components.image_example_gen import encode

  results = [encode.encode_file(data) for data in datas]
  return (
    np.array([r.content for r in results], dtype=np.uint64),
    np.array([r.near for r in results], dtype=np.uint64).reshape(-1, 2),
  )


def bits(x: np.ndarray) -> np.ndarray:
  from components import duplicates

  return duplicates.distance(x, np.zeros_like(x))


def pair_distances(hashes: np.ndarray, chunk: int = 1000):
  """(i, j, distance) of every pair i < j of rows of (n, 2) hashes, the distance as grouping
  takes it (duplicates.near_distance: the closest of either's hashes), chunked (only pairs
  within 16 bits are kept: the thresholds measured are below)."""
  rows, cols, dists = [], [], []
  for start in range(0, len(hashes), chunk):
    block = hashes[start : start + chunk]
    d = np.min(
      [
        bits(np.bitwise_xor(block[:, None, a], hashes[None, :, b]).ravel()).reshape(
          len(block), len(hashes)
        )
        for a in range(hashes.shape[1])
        for b in range(hashes.shape[1])
      ],
      axis=0,
    )
    i, j = np.nonzero(d <= 16)
    i += start
    keep = i < j
    rows.append(i[keep])
    cols.append(j[keep])
    dists.append(d[i[keep] - start, j[keep]])
  return np.concatenate(rows), np.concatenate(cols), np.concatenate(dists)


def window_overlap(a, b) -> float:
  """Overlap of two crop windows of one photo (a mirrored crop overlaps like the crop: the hashes
  do not see mirroring)."""
  if a[0] != b[0]:
    return 0.0
  _, l1, t1, s1, _ = a
  _, l2, t2, s2, _ = b
  w = max(0, min(l1 + s1, l2 + s2) - max(l1, l2))
  h = max(0, min(t1 + s1, t2 + s2) - max(t1, t2))
  return w * h / (s1 * s1 + s2 * s2 - w * h)


def shares_within(distances: np.ndarray, total: int) -> dict:
  """{threshold: share of `total` that `distances` within it make}."""
  return {str(t): (int((distances <= t).sum()) / total if total else 0.0) for t in THRESHOLDS}
