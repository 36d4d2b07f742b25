"""Near-duplicate images: how many edited copies of a photo ImageExampleGen's perceptual hash
(encode.near_hash) puts within duplicates.NEAR_DISTANCE bits of the original, how many pairs of
distinct images it wrongly puts there, what that does to the groups (duplicates.group), what
hashing costs per image and what grouping 100,000 images costs.

  .venv/bin/python -m bench.near_duplicates [--quick] [--rounds N] [--json OUT]

Images: the real photos found offline (scikit-learn's china.jpg and flower.jpg, matplotlib's
grace_hopper.jpg, scipy's face where installed):
  photos   random square crops of them (160 px to the photo's shorter side), resized to 224x224,
           half mirrored, JPEG quality 90 (as bench/input_data.py's); class = the source photo;
  large    crops of 70–100% of a photo's width and height at its own resolution (~300–1024 px),
           JPEG quality 90;
  mosaics  distinct images with photo statistics: 224x224 JPEGs made of 3x3 random patches of
           the photos;
  digits   the embedded default data: scikit-learn's 1,797 8x8 digits as grayscale PNGs, written
           as cli/inputs/default_data.write_digits writes them; class = the digit.
Edits, each made from the decoded original and saved as JPEG quality 90 unless named: resized to
50% and 25%, re-encoded at quality 90/70/50, a lossless PNG, crops of 2/5/10% of the width and
height (random sides), brightness ±10% and ±20%, mirrored left to right, and combinations
(digits: upscaled 2x and 4x as PNG, JPEG of the 8x8 image, brightness ±20% as PNG).

Every hash of these sets is encode.encode_file's on the encoded bytes (its 1/8-scale decode of a
JPEG kept as it is included). Candidates, by monkeypatching encode.near_hash: `near_hash` (the
project's), `dhash_9x8` (the difference hash it replaced), `phash_32x32` (the classic pHash:
resampled to 32x32 first). For each, at thresholds T in THRESHOLDS:
  recall       the share of edited copies within T bits of their original, per set and edit;
  false pairs  the share of pairs of distinct images within T bits: photos of the same class
               whose crop windows overlap less than 30% (IoU; mirrored or not: the hash is
               mirror-invariant), of different classes; mosaics; digits within a class and across;
  groups       duplicates.group over the photos and all their copies (labels = class): the
               share of originals grouped with another original, the largest group (in
               originals), the conflicted share; over the digits: the share in a group of 2 or
               more, the largest group, the conflicted share; over the digits saved as JPEG.
Cost, each as the best of 5 runs: µs per near_hash on a 224x224 image at full size and on a
1/8-drafted JPEG (28x28), against encode_file on the same JPEG.
Grouping at scale (hashes of 100,000 images, near_hash on the image directly, without encoding):
  distinct  mosaics (96x96, 3x3 patches of the photos), 1 in 10 followed by an edited copy
            (crop 3%, brightness +10%), 1 in 50 by an exact copy; 10 labels, copies keep theirs;
  views     random crops (48 px to the whole photo, any aspect, half mirrored) of the same few
            photos: overlapping views of one scene, so near pairs grow with n², a worst case.
duplicates.group at NEAR_DISTANCE on the first 10k, 50k and 100k: seconds (median of the rounds),
peak traced memory (tracemalloc, one extra run), µs per image, and the ratio of µs per image at
100k over 10k (1 = linear, 10 = quadratic), with its lowest and highest round. duplicates.near_pairs
alone at 100k at T = 4, 6, 8 (T // 2 + 1 pieces, each hash probing its piece and the piece with
one bit flipped), against its first version (T + 1 pieces compared whole:
_near_pairs_exact_pieces below), checked to find the same pairs.
"""

import argparse
import contextlib
import functools
import io
import os
import statistics
import time
import timeit
import tracemalloc
import warnings

import numpy as np
import PIL.Image
import PIL.ImageEnhance

warnings.filterwarnings('ignore', category=DeprecationWarning)  # scipy.misc.face

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')

THRESHOLDS = (2, 4, 6, 8, 10)
SIDE = 224
DISTINCT_IOU = 0.3  # photo crops overlapping less than this are distinct images
SCALE_SIZES = (10_000, 50_000, 100_000)


# -- the photos -----------------------------------------------------------------------------------


def source_photos():
  """[(name, RGB image)] of the real photos installed here."""
  import sklearn.datasets

  folder = os.path.join(os.path.dirname(sklearn.datasets.__file__), 'images')
  photos = [
    (name, PIL.Image.open(os.path.join(folder, name)).convert('RGB'))
    for name in ('china.jpg', 'flower.jpg')
  ]
  with contextlib.suppress(Exception):
    import matplotlib.cbook

    path = matplotlib.cbook.get_sample_data('grace_hopper.jpg', asfileobj=False)
    photos.append(('grace_hopper.jpg', PIL.Image.open(path).convert('RGB')))
  with contextlib.suppress(Exception):
    from scipy import misc

    photos.append(('scipy face', PIL.Image.fromarray(misc.face())))
  return photos


def _jpeg(image, quality=90) -> bytes:
  buffer = io.BytesIO()
  image.save(buffer, format='JPEG', quality=quality)
  return buffer.getvalue()


def _png(image) -> bytes:
  buffer = io.BytesIO()
  image.save(buffer, format='PNG')
  return buffer.getvalue()


def _decoded(data: bytes):
  image = PIL.Image.open(io.BytesIO(data))
  return image.convert('RGB' if image.mode != 'L' else 'L')


def photo_crops(photos, count: int, rng):
  """(JPEG bytes, class, crop window (class, left, top, side, mirrored)) of `count` crops."""
  out = []
  for i in range(count):
    klass = i % len(photos)
    photo = photos[klass][1]
    side = int(rng.integers(160, min(photo.size) + 1))
    left = int(rng.integers(0, photo.size[0] - side + 1))
    top = int(rng.integers(0, photo.size[1] - side + 1))
    image = photo.crop((left, top, left + side, top + side)).resize(
      (SIDE, SIDE), PIL.Image.BILINEAR
    )
    mirrored = bool(rng.random() < 0.5)
    if mirrored:
      image = image.transpose(PIL.Image.FLIP_LEFT_RIGHT)
    out.append((_jpeg(image), klass, (klass, left, top, side, mirrored)))
  return out


def large_crops(photos, count: int, rng):
  out = []
  for i in range(count):
    klass = i % len(photos)
    photo = photos[klass][1]
    width = int(photo.size[0] * rng.uniform(0.7, 1.0))
    height = int(photo.size[1] * rng.uniform(0.7, 1.0))
    left = int(rng.integers(0, photo.size[0] - width + 1))
    top = int(rng.integers(0, photo.size[1] - height + 1))
    out.append((_jpeg(photo.crop((left, top, left + width, top + height))), klass, None))
  return out


def mosaic(photos, rng, tile: int, grid: int = 3):
  canvas = PIL.Image.new('RGB', (tile * grid, tile * grid))
  for a in range(grid):
    for b in range(grid):
      photo = photos[int(rng.integers(len(photos)))][1]
      side = int(rng.integers(24, 160))
      left = int(rng.integers(0, photo.size[0] - side))
      top = int(rng.integers(0, photo.size[1] - side))
      patch = photo.crop((left, top, left + side, top + side)).resize((tile, tile), PIL.Image.BOX)
      canvas.paste(patch, (tile * a, tile * b))
  return canvas


def digit_images():
  """([8x8 grayscale image], labels): the default data, as cli/inputs/default_data.write_digits
  writes it."""
  from sklearn.datasets import load_digits

  digits = load_digits()
  images = [
    PIL.Image.fromarray(np.round(pixels * (255.0 / 16.0)).astype(np.uint8), 'L')
    for pixels in digits.images
  ]
  return images, np.asarray(digits.target)


# -- edits ----------------------------------------------------------------------------------------


def _resized(image, scale):
  size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
  return image.resize(size, PIL.Image.LANCZOS)


def _cropped(image, share, rng):
  """`share` of the width and of the height cut off, split at random between the two sides."""
  cut_x, cut_y = round(image.width * share), round(image.height * share)
  left, top = int(rng.integers(0, cut_x + 1)), int(rng.integers(0, cut_y + 1))
  return image.crop((left, top, left + image.width - cut_x, top + image.height - cut_y))


def _mirrored(image):
  return image.transpose(PIL.Image.FLIP_LEFT_RIGHT)


def _brightened(image, factor):
  return PIL.ImageEnhance.Brightness(image).enhance(factor)


def photo_edits(rng):
  """{edit: function(decoded RGB image) -> encoded bytes}."""
  return {
    'resize 50%': lambda im: _jpeg(_resized(im, 0.5)),
    'resize 25%': lambda im: _jpeg(_resized(im, 0.25)),
    'JPEG q90': lambda im: _jpeg(im, 90),
    'JPEG q70': lambda im: _jpeg(im, 70),
    'JPEG q50': lambda im: _jpeg(im, 50),
    'lossless PNG': _png,
    'crop 2%': lambda im: _jpeg(_cropped(im, 0.02, rng)),
    'crop 5%': lambda im: _jpeg(_cropped(im, 0.05, rng)),
    'crop 10%': lambda im: _jpeg(_cropped(im, 0.10, rng)),
    'brightness +10%': lambda im: _jpeg(_brightened(im, 1.1)),
    'brightness -10%': lambda im: _jpeg(_brightened(im, 0.9)),
    'brightness +20%': lambda im: _jpeg(_brightened(im, 1.2)),
    'brightness -20%': lambda im: _jpeg(_brightened(im, 0.8)),
    'resize 50% + q70': lambda im: _jpeg(_resized(im, 0.5), 70),
    'crop 2% + brightness -10% + resize 50%': lambda im: _jpeg(
      _resized(_brightened(_cropped(im, 0.02, rng), 0.9), 0.5)
    ),
    'crop 5% + brightness +10% + q70': lambda im: _jpeg(
      _brightened(_cropped(im, 0.05, rng), 1.1), 70
    ),
    'resize 50% + crop 5% as PNG': lambda im: _png(_cropped(_resized(im, 0.5), 0.05, rng)),
    'mirrored': lambda im: _jpeg(_mirrored(im)),
    'mirrored + resize 50% + q70': lambda im: _jpeg(_resized(_mirrored(im), 0.5), 70),
  }


DIGIT_EDITS = {
  'upscaled 2x (PNG)': lambda im: _png(im.resize((16, 16), PIL.Image.BICUBIC)),
  'upscaled 4x (PNG)': lambda im: _png(im.resize((32, 32), PIL.Image.BICUBIC)),
  'upscaled 4x (JPEG q90)': lambda im: _jpeg(im.resize((32, 32), PIL.Image.BICUBIC)),
  'JPEG q90 (8x8)': _jpeg,
  'brightness +20% (PNG)': lambda im: _png(_brightened(im, 1.2)),
  'brightness -20% (PNG)': lambda im: _png(_brightened(im, 0.8)),
}


# -- candidate hashes -----------------------------------------------------------------------------


def dhash_9x8(image) -> int:
  """The difference hash near_hash replaced: 9x8 grey (box), is the right neighbour brighter."""
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


def candidates():
  from components.image_example_gen import encode

  return {'near_hash': encode.near_hash, 'dhash_9x8': dhash_9x8, 'phash_32x32': phash_32x32}


@contextlib.contextmanager
def hashing_with(function):
  from components.image_example_gen import encode

  kept = encode.near_hash
  encode.near_hash = function
  try:
    yield
  finally:
    encode.near_hash = kept


def stored(datas):
  """(content, near) arrays of encode_file over encoded images."""
  from components.image_example_gen import encode

  results = [encode.encode_file(data) for data in datas]
  return (
    np.array([r.content for r in results], dtype=np.uint64),
    np.array([r.near for r in results], dtype=np.uint64),
  )


def _bits(x: np.ndarray) -> np.ndarray:
  from components import duplicates

  return duplicates.distance(x, np.zeros_like(x))


def _pair_distances(hashes: np.ndarray, chunk: int = 1000):
  """(i, j, distance) of every pair i < j, chunked (only pairs within 16 bits are kept: the
  thresholds measured are below)."""
  rows, cols, dists = [], [], []
  for start in range(0, len(hashes), chunk):
    block = hashes[start : start + chunk]
    x = np.bitwise_xor(block[:, None], hashes[None, :])
    d = _bits(x.ravel()).reshape(x.shape)
    i, j = np.nonzero(d <= 16)
    i += start
    keep = i < j
    rows.append(i[keep])
    cols.append(j[keep])
    dists.append(d[i[keep] - start, j[keep]])
  return np.concatenate(rows), np.concatenate(cols), np.concatenate(dists)


def _iou(a, b) -> float:
  """Overlap of two crop windows of one photo (a mirrored crop overlaps like the crop: the hash
  does not see mirroring)."""
  if a[0] != b[0]:
    return 0.0
  _, l1, t1, s1, _ = a
  _, l2, t2, s2, _ = b
  w = max(0, min(l1 + s1, l2 + s2) - max(l1, l2))
  h = max(0, min(t1 + s1, t2 + s2) - max(t1, t2))
  return w * h / (s1 * s1 + s2 * s2 - w * h)


def _shares(distances: np.ndarray, total: int) -> dict:
  """{threshold: share of `total` that `distances` within it make}."""
  return {str(t): (int((distances <= t).sum()) / total if total else 0.0) for t in THRESHOLDS}


# -- quality --------------------------------------------------------------------------------------


def quality(sets, digits, digit_labels, rng, mosaics):
  """Recall, false pairs and groups per candidate (the module docstring)."""
  from components import duplicates

  edits = photo_edits(rng)
  # The edited copies, made once: {set: {edit: [bytes]}}.
  copies = {
    name: {edit: [make(_decoded(data)) for data, _, _ in images] for edit, make in edits.items()}
    for name, images in sets.items()
  }
  digit_pngs = [_png(im) for im in digits]
  digit_jpegs = [_jpeg(im) for im in digits]
  digit_copies = {edit: [make(im) for im in digits] for edit, make in DIGIT_EDITS.items()}
  photos = sets['photos']
  windows = [w for _, _, w in photos]
  classes = np.array([c for _, c, _ in photos])

  results = {}
  for name, function in candidates().items():
    with hashing_with(function):
      result = {'recall': {}, 'false_pairs': {}, 'groups': {}}
      for set_name, images in sets.items():
        content, near = stored([data for data, _, _ in images])
        result['recall'][set_name] = {}
        for edit, datas in copies[set_name].items():
          d = duplicates.distance(near, stored(datas)[1])
          result['recall'][set_name][edit] = _shares(d, len(d))
        if set_name == 'photos':
          photo_content, photo_near = content, near
          photo_copies = {edit: stored(datas) for edit, datas in copies[set_name].items()}
      # False pairs among the photo crops, by kind of pair.
      n = len(photos)
      i, j, d = _pair_distances(photo_near)
      iou = np.array([_iou(windows[a], windows[b]) for a, b in zip(i, j)])
      same = classes[i] == classes[j]
      all_i, all_j = np.triu_indices(n, 1)
      all_same = classes[all_i] == classes[all_j]
      distinct_same_total = sum(
        1
        for a, b in zip(all_i[all_same], all_j[all_same])
        if _iou(windows[a], windows[b]) < DISTINCT_IOU
      )
      kinds = {
        'photos, same class, distinct views': (same & (iou < DISTINCT_IOU), distinct_same_total),
        'photos, same class, overlapping views (not false)': (
          same & (iou >= DISTINCT_IOU),
          int(all_same.sum()) - distinct_same_total,
        ),
        'photos, different classes': (~same, int((~all_same).sum())),
      }
      for kind, (mask, total) in kinds.items():
        result['false_pairs'][kind] = _shares(d[mask], total)
        result['false_pairs'][kind]['pairs'] = total
      _, mosaic_near = stored(mosaics)
      _, _, md = _pair_distances(mosaic_near)
      total = len(mosaics) * (len(mosaics) - 1) // 2
      result['false_pairs']['mosaics (distinct)'] = _shares(md, total)
      result['false_pairs']['mosaics (distinct)']['pairs'] = total
      digit_content, digit_near = stored(digit_pngs)
      di, dj, dd = _pair_distances(digit_near)
      same = digit_labels[di] == digit_labels[dj]
      all_i, all_j = np.triu_indices(len(digits), 1)
      all_same = digit_labels[all_i] == digit_labels[all_j]
      for kind, mask, total in (
        ('digits, same class', same, int(all_same.sum())),
        ('digits, different classes', ~same, int((~all_same).sum())),
      ):
        result['false_pairs'][kind] = _shares(dd[mask], total)
        result['false_pairs'][kind]['pairs'] = total
      result['recall']['digits'] = {}
      for edit, datas in digit_copies.items():
        d = duplicates.distance(digit_near, stored(datas)[1])
        result['recall']['digits'][edit] = _shares(d, len(d))

      # Groups: photos with every copy (labels = class), the digits, the digits as JPEGs.
      all_content = np.concatenate([photo_content] + [c for c, _ in photo_copies.values()])
      all_near = np.concatenate([photo_near] + [h for _, h in photo_copies.values()])
      all_labels = np.tile(classes, len(photo_copies) + 1)
      jpeg_content, jpeg_near = stored(digit_jpegs)
      for t in THRESHOLDS:
        g = duplicates.group(all_content, all_labels, all_near, t)
        originals = g.group[:n]
        per_group = np.bincount(originals, minlength=g.group.max() + 1)
        members = {}
        for index, group_id in enumerate(originals.tolist()):
          members.setdefault(group_id, []).append(index)
        with_distinct = np.zeros(n, dtype=bool)  # grouped with a distinct view (IoU < 0.3)
        for group_members in members.values():
          for a in group_members:
            with_distinct[a] = any(
              _iou(windows[a], windows[b]) < DISTINCT_IOU for b in group_members if b != a
            )
        groups = {
          'photos_grouped_with_another': float((per_group[originals] > 1).mean()),
          'photos_grouped_with_a_distinct_view': float(with_distinct.mean()),
          'photos_largest_group': int(per_group.max()),
          'photos_conflicted': float(g.conflicted.mean()),
        }
        for key, (c, h) in (
          ('digits', (digit_content, digit_near)),
          ('digits_jpeg', (jpeg_content, jpeg_near)),
        ):
          g = duplicates.group(c, digit_labels, h, t)
          sizes = np.bincount(g.group)
          groups[f'{key}_in_groups'] = float((sizes[g.group] > 1).mean())
          groups[f'{key}_largest_group'] = int(sizes.max())
          groups[f'{key}_conflicted'] = float(g.conflicted.mean())
        result['groups'][str(t)] = groups
      result['groups']['digits_jpeg_distinct_contents'] = int(len(np.unique(jpeg_content)))
      # The median threshold sets 32 bits (ties aside): distances are then even.
      result['hashes_with_32_bits_set'] = {
        'photos': float((_bits(photo_near) == 32).mean()),
        'digits': float((_bits(digit_near) == 32).mean()),
      }
      results[name] = result
  return results


# -- cost -----------------------------------------------------------------------------------------


def hash_cost(jpegs):
  """µs per call (best of 5) of near_hash and content_hash at full size and 1/8 drafted, and
  of encode_file on the same JPEGs."""
  from components.image_example_gen import encode

  full, drafted = [], []
  for data in jpegs:
    image = PIL.Image.open(io.BytesIO(data))
    image.load()
    full.append(image)
    image = PIL.Image.open(io.BytesIO(data))
    image.draft(image.mode, (image.width // 8, image.height // 8))
    image.load()
    drafted.append(image)

  def per_call(function, items, number=20):
    best = min(timeit.repeat(lambda: [function(x) for x in items], number=number, repeat=5))
    return best / number / len(items) * 1e6

  figures = {}
  for name, function in candidates().items():
    figures[f'{name}_full_224'] = per_call(function, full)
    figures[f'{name}_drafted_28'] = per_call(function, drafted)
  figures['content_hash_drafted_28'] = per_call(encode.content_hash, drafted)
  figures['encode_file_jpeg_224'] = per_call(encode.encode_file, jpegs, number=5)
  figures['near_hash_drafted_over_encode_file'] = (
    figures['near_hash_drafted_28'] / figures['encode_file_jpeg_224']
  )
  figures['both_hashes_drafted_over_encode_file'] = (
    figures['near_hash_drafted_28'] + figures['content_hash_drafted_28']
  ) / figures['encode_file_jpeg_224']
  return figures


# -- grouping at scale ----------------------------------------------------------------------------


def scale_sets(photos, count: int, rng):
  """{'distinct': (content, labels, near), 'views': (...)} of `count` images each."""
  from components.image_example_gen import encode

  near, content, labels = [], [], []
  while len(near) < count:
    image = mosaic(photos, rng, 32)
    label = int(rng.integers(10))
    near.append(encode.near_hash(image))
    content.append(int(rng.integers(1 << 63)))
    labels.append(label)
    if len(near) % 10 == 1:  # an edited copy
      cut = round(image.width * 0.03)
      copy = _brightened(image.crop((cut, 0, image.width, image.height - cut)), 1.1)
      near.append(encode.near_hash(copy))
      content.append(int(rng.integers(1 << 63)))
      labels.append(label)
    if len(near) % 50 == 2:  # an exact copy
      near.append(near[-1])
      content.append(content[-1])
      labels.append(label)
  distinct = (
    np.array(content[:count], dtype=np.uint64),
    np.array(labels[:count]),
    np.array(near[:count], dtype=np.uint64),
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
    views.append(encode.near_hash(image))
  views = np.array(views, dtype=np.uint64)
  return {
    'distinct': distinct,
    'views': (
      rng.integers(0, 1 << 63, size=count).astype(np.uint64),
      np.arange(count) % len(photos),
      views,
    ),
  }


def _near_pairs_exact_pieces(hashes, max_distance):
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
  # near_pairs alone at the largest size, by threshold, against its first version.
  unique = np.unique(sets['distinct'][2][: sizes[-1]])
  check = np.unique(sets['distinct'][2][: sizes[0]])
  figures['near_pairs_distinct'] = {}
  for t in (4, 6, 8):
    assert np.array_equal(duplicates.near_pairs(check, t), _near_pairs_exact_pieces(check, t))
    started = time.perf_counter()
    pairs = duplicates.near_pairs(unique, t)
    middle = time.perf_counter()
    whole = _near_pairs_exact_pieces(unique, t)
    ended = time.perf_counter()
    assert len(pairs) == len(whole)
    figures['near_pairs_distinct'][str(t)] = {
      'pairs': len(pairs),
      'near_pairs_s': middle - started,
      'exact_pieces_s': ended - middle,
    }
  return figures


# -- main -----------------------------------------------------------------------------------------


def _table(rows, header):
  widths = [max(len(str(r[k])) for r in rows + [header]) for k in range(len(header))]
  for row in [header] + rows:
    print(
      '  '
      + '  '.join(
        str(v).rjust(w) if k else str(v).ljust(w) for k, (v, w) in enumerate(zip(row, widths))
      )
    )


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument(
    '--quick', action='store_true', help='40 photos, 300 mosaics, 2k/5k/10k hashes, 1 round'
  )
  parser.add_argument('--rounds', type=int, default=0, help='grouping rounds (default 3)')
  parser.add_argument('--json', help='also write the figures here')
  args = parser.parse_args(argv)
  from bench import figures as figures_file
  from components import duplicates

  rng = np.random.default_rng(0)
  rounds = args.rounds or (1 if args.quick else 3)
  photo_count, large_count, mosaic_count = (40, 8, 300) if args.quick else (400, 40, 3000)
  sizes = (2_000, 5_000, 10_000) if args.quick else SCALE_SIZES
  started = time.monotonic()
  photos = source_photos()
  sets = {
    'photos': photo_crops(photos, photo_count, rng),
    'large': large_crops(photos, large_count, rng),
  }
  mosaics = [_jpeg(mosaic(photos, rng, SIDE // 3)) for _ in range(mosaic_count)]
  digits, digit_labels = digit_images()
  results = quality(sets, digits, digit_labels, rng, mosaics)
  print(f'quality measured ({time.monotonic() - started:.0f} s)', flush=True)
  cost = hash_cost([data for data, _, _ in sets['photos'][:50]])
  scale = grouping_at_scale(scale_sets(photos, sizes[-1], rng), sizes, rounds)
  chosen = str(duplicates.NEAR_DISTANCE)
  figures = {
    'near_distance': duplicates.NEAR_DISTANCE,
    'photos': [name for name, _ in photos],
    'counts': {
      'photos': photo_count,
      'large': large_count,
      'mosaics': mosaic_count,
      'digits': len(digits),
      'scale': list(sizes),
    },
    'cores': os.cpu_count(),
    'rounds': rounds,
    'thresholds': list(THRESHOLDS),
    'candidates': results,
    'hash_cost_us': cost,
    'grouping': scale,
    'seconds': time.monotonic() - started,
  }

  print(
    f'{photo_count} photo crops, {large_count} large, {mosaic_count} mosaics, '
    f'{len(digits)} digits from {len(photos)} photos; NEAR_DISTANCE = {chosen}'
  )
  for name, result in results.items():
    print(f'{name}: recall (share of copies within T bits), T = {", ".join(map(str, THRESHOLDS))}')
    rows = [
      [f'{set_name}: {edit}'] + [f'{shares[str(t)]:.2f}' for t in THRESHOLDS]
      for set_name, edits in result['recall'].items()
      for edit, shares in edits.items()
    ]
    _table(rows, ['copy'] + [f'T={t}' for t in THRESHOLDS])
    print(f'{name}: false pairs (share of pairs of distinct images within T bits)')
    rows = [
      [f'{kind} ({shares["pairs"]:,} pairs)'] + [f'{shares[str(t)]:.1e}' for t in THRESHOLDS]
      for kind, shares in result['false_pairs'].items()
    ]
    _table(rows, ['pairs'] + [f'T={t}' for t in THRESHOLDS])
    print(f'{name}: groups')
    keys = list(result['groups'][str(THRESHOLDS[0])])
    rows = [
      [key]
      + [
        f'{result["groups"][str(t)][key]:.3f}'
        if isinstance(result['groups'][str(t)][key], float)
        else str(result['groups'][str(t)][key])
        for t in THRESHOLDS
      ]
      for key in keys
    ]
    _table(rows, ['groups'] + [f'T={t}' for t in THRESHOLDS])
    print(
      f'  digits saved as JPEG: {result["groups"]["digits_jpeg_distinct_contents"]} distinct contents of {len(digits)}'
    )
    print(f'  hashes with 32 bits set: {result["hashes_with_32_bits_set"]}')
  print('hash cost, µs per image (best of 5):')
  for key, value in cost.items():
    print(f'  {key}: {value:.2f}' if 'over' in key else f'  {key}: {value:.1f}')
  print(f'grouping (duplicates.group at T = {chosen}), median of {rounds} round(s):')
  for name in ('distinct', 'views'):
    f = scale[name]
    print(
      f'  {name}: '
      + ', '.join(
        f'{int(n):,}: {f["seconds"][n]:.2f} s ({f["us_per_image"][n]:.1f} µs/image, '
        f'{f["peak_traced_mb"][n]:.0f} MB, {f["groups"][n]["in_groups"]:.0%} in groups, '
        f'largest {f["groups"][n]["largest_group"]:,})'
        for n in f['seconds']
      )
    )
    low, high = f['per_image_ratio_rounds']
    print(
      f'    µs per image {sizes[-1]:,} over {sizes[0]:,}: {f["per_image_ratio"]:.2f} '
      f'(rounds {low:.2f}–{high:.2f}; 1 = linear, {sizes[-1] // sizes[0]} = quadratic)'
    )
  for t, f in scale['near_pairs_distinct'].items():
    print(
      f'  near_pairs at T={t}, {sizes[-1]:,} distinct: {f["near_pairs_s"]:.2f} s, '
      f'first version (T + 1 pieces) {f["exact_pieces_s"]:.2f} s ({f["pairs"]:,} pairs, same pairs)'
    )
  print(f'({figures["seconds"]:.0f} s)')
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
