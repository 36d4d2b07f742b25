"""Near-duplicate images (encode.near_hashes within duplicates.NEAR_DISTANCE) and the grouping of
duplicates.py: real photos edited, near_pairs against brute force, connected components, split
keys and conflicts. How often edits are caught is measured by bench/near_duplicates.py."""

import io
import os

import numpy as np
import PIL.Image
import pytest
import sklearn.datasets

from components import duplicates
from components.image_example_gen import encode

PHOTOS = os.path.join(os.path.dirname(sklearn.datasets.__file__), 'images')
# 320x320 windows of scikit-learn's photos, stored as 224x224 JPEGs (quality 90).
CROPS = [
  ('china.jpg', (0, 0, 320, 320)),
  ('china.jpg', (300, 100, 620, 420)),
  ('flower.jpg', (100, 50, 400, 350)),
]


def _encoded(image, fmt='JPEG', **options) -> bytes:
  buffer = io.BytesIO()
  image.save(buffer, format=fmt, **options)
  return buffer.getvalue()


def _near(data: bytes):
  """(as loaded, mirrored) hashes of an encoded image."""
  return encode.encode_file(data).near


def _bits(a: int, b: int) -> int:
  return bin(a ^ b).count('1')


def _near_bits(a, b) -> int:
  """Bits between two images' closest hashes (what grouping checks)."""
  return int(duplicates.near_distance(np.array([a], np.uint64), np.array([b], np.uint64))[0])


@pytest.fixture(scope='module')
def originals():
  """[(JPEG bytes, decoded RGB)] of CROPS."""
  out = []
  for name, box in CROPS:
    photo = PIL.Image.open(os.path.join(PHOTOS, name)).convert('RGB')
    data = _encoded(photo.crop(box).resize((224, 224), PIL.Image.BILINEAR), quality=90)
    out.append((data, PIL.Image.open(io.BytesIO(data)).convert('RGB')))
  return out


EDITS = {
  'resized to 50% and re-encoded at quality 75': lambda im: _encoded(
    im.resize((112, 112), PIL.Image.LANCZOS), quality=75
  ),
  'cropped 1% a side': lambda im: _encoded(im.crop((2, 2, 222, 222)), quality=90),
  'lossless PNG of the JPEG': lambda im: _encoded(im, 'PNG'),
  'mirrored left to right': lambda im: _encoded(
    im.transpose(PIL.Image.FLIP_LEFT_RIGHT), quality=90
  ),
}


@pytest.mark.parametrize('edit', EDITS)
def test_an_edited_copy_is_a_near_duplicate(originals, edit):
  for data, image in originals:
    # The original is decoded at 1/8 scale (a JPEG kept as it is), a PNG copy at full size.
    assert _near_bits(_near(data), _near(EDITS[edit](image))) <= duplicates.NEAR_DISTANCE


def test_a_mirror_image_has_the_image_hashes_swapped(originals):
  # Mirroring negates the odd horizontal cosines: the same 64 coefficients up to sign.
  for _, image in originals:
    as_loaded, mirrored = encode.near_hashes(image)
    assert as_loaded != mirrored
    assert encode.near_hashes(image.transpose(PIL.Image.FLIP_LEFT_RIGHT)) == (mirrored, as_loaded)


def test_a_mirrored_tile_whose_two_hashes_are_close_is_grouped_with_it():
  # A 32x32 tile of a photo whose two hashes share their top bits: JPEG's noise decides which is
  # smaller, and the copy's smaller hash is the other one (30 bits from the original's), so
  # keeping the smaller of the two missed it; both are checked.
  photo = PIL.Image.open(os.path.join(PHOTOS, 'china.jpg')).convert('RGB')
  tile = photo.crop((185, 0, 217, 32))
  original = _near(_encoded(tile, quality=90))
  mirrored = _near(_encoded(tile.transpose(PIL.Image.FLIP_LEFT_RIGHT), quality=90))
  assert original[0] >> 61 == original[1] >> 61  # close in value: the top 3 bits agree
  assert _bits(min(original), min(mirrored)) > duplicates.NEAR_DISTANCE  # the old rule's miss
  assert _near_bits(original, mirrored) <= duplicates.NEAR_DISTANCE
  g = duplicates.group([1, 2], ['x', 'x'], [original, mirrored])
  assert g.group[0] == g.group[1] and g.split_key[0] == g.split_key[1]


def test_distinct_photo_crops_are_not_near(originals):
  hashes = [_near(data) for data, _ in originals]
  for i, a in enumerate(hashes):
    for b in hashes[i + 1 :]:
      assert _near_bits(a, b) > 2 * duplicates.NEAR_DISTANCE


@pytest.mark.parametrize('mode', ['1', 'L', 'LA', 'P', 'RGB', 'RGBA', 'CMYK', 'I;16'])
def test_near_hash_takes_every_mode_and_size(mode):
  rng = np.random.default_rng(0)
  rgb = PIL.Image.fromarray(rng.integers(0, 256, (37, 53, 3), dtype=np.uint8), 'RGB')
  image = rgb.convert(mode) if mode != 'I;16' else rgb.convert('L').convert('I;16')
  for size in [(1, 1), (3, 9), (53, 37), (700, 90)]:
    for value in encode.near_hashes(image.resize(size)):
      assert 0 <= value < 1 << 64


def _brute_force(hashes: np.ndarray, max_distance: int) -> np.ndarray:
  pairs = []
  for i in range(len(hashes)):
    d = duplicates.distance(hashes[i + 1 :], np.full(len(hashes) - i - 1, hashes[i]))
    pairs.extend((i, i + 1 + j) for j in np.flatnonzero(d <= max_distance))
  return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


def _planted_hashes(rng, count: int = 2500) -> np.ndarray:
  """Random hashes, copies of some with 1..12 bits flipped, and a cluster around one hash (big
  buckets in every piece)."""
  hashes = list(rng.integers(0, 1 << 64, size=count, dtype=np.uint64))
  for source in rng.choice(count, size=count // 5, replace=False):
    flipped = rng.choice(64, size=int(rng.integers(1, 13)), replace=False)
    hashes.append(hashes[source] ^ np.uint64(sum(1 << int(b) for b in flipped)))
  centre = hashes[0]
  for _ in range(300):
    flipped = rng.choice(64, size=int(rng.integers(1, 9)), replace=False)
    hashes.append(centre ^ np.uint64(sum(1 << int(b) for b in flipped)))
  return np.unique(np.array(hashes, dtype=np.uint64))


@pytest.mark.parametrize('max_distance', [1, 2, duplicates.NEAR_DISTANCE, 7])
def test_near_pairs_finds_exactly_the_brute_force_pairs(max_distance):
  hashes = _planted_hashes(np.random.default_rng(max_distance))
  expected = _brute_force(hashes, max_distance)
  assert len(expected) > 50  # the planted pairs are there
  np.testing.assert_array_equal(duplicates.near_pairs(hashes, max_distance), expected)


def test_near_pairs_without_pairs():
  assert duplicates.near_pairs(np.array([5], dtype=np.uint64)).shape == (0, 2)
  assert duplicates.near_pairs(np.array([0, 1], dtype=np.uint64), 0).shape == (0, 2)


def test_near_rows_checks_every_hash_of_a_row():
  far = _hash(*range(32, 64))
  rows = np.array(
    [
      [0, far],  # 0
      [far ^ 1, _hash(0, 1, 2, 3, 4, 5)],  # 1: its first hash 1 bit from 0's second
      [_hash(0, 1, 2, 3, 4, 5), far ^ 3],  # 2: 0 bits from 1's second, 2 from 0's second
      [_hash(*range(8, 40)), _hash(*range(8, 40))],  # 3: its two hashes equal, near no other row
    ],
    dtype=np.uint64,
  )
  assert duplicates.near_rows(rows, 4).tolist() == [[0, 1], [0, 2], [1, 2]]
  assert duplicates.near_distance(rows[:3], rows[[1, 2, 0]]).tolist() == [1, 0, 2]


def _hash(*bits: int) -> int:
  return sum(1 << b for b in bits)


def test_group_joins_near_chains_and_exact_copies_and_shares_the_split_key():
  far = _hash(*range(40, 64))  # 24 bits from everything below
  near = [
    0,  # 0: a
    _hash(0, 1, 2),  # 1: 3 bits from a
    _hash(0, 1, 2, 3, 4, 5),  # 2: 3 from 1, 6 from a: joined through 1
    far,  # 3: alone
    far,  # 4: the same near hash as 3, other content: near-identical
    _hash(20, 21, 22, 23, 24, 25, 26, 27),  # 5: alone
    _hash(20, 21, 22, 23, 24, 25, 26, 27),  # 6: an exact copy of 5
  ]
  content = [10, 11, 12, 13, 14, 15, 15]
  labels = ['x'] * 7
  g = duplicates.group(content, labels, near, max_distance=4)
  assert g.group[0] == g.group[1] == g.group[2]
  assert g.group[3] == g.group[4] != g.group[0]
  assert g.group[5] == g.group[6] not in (g.group[0], g.group[3])
  assert len(set(g.group.tolist())) == 3
  # A group's split key: its smallest content, shared by its members.
  assert g.split_key[:3] == [duplicates.split_key(10)] * 3
  assert g.split_key[3:5] == [duplicates.split_key(13)] * 2
  assert g.split_key[5:] == [duplicates.split_key(15)] * 2
  assert not g.conflicted.any()
  assert g.duplicates == 2  # the exact copies
  assert g.near_groups == 2  # groups of more than one content
  assert [len(m) for m in g.largest] == [3, 2, 2]
  assert len(set(duplicates.assigned_splits(g, 50, keep_conflicts=False)[:3])) == 1


def test_conflicts_only_where_a_near_copy_or_the_same_content_has_another_label():
  near = [0, _hash(0, 1), _hash(0, 1, 2, 3), _hash(*range(30, 50)), _hash(*range(30, 50)), 1 << 60]
  content = [1, 2, 3, 4, 4, 6]
  labels = ['cat', 'cat', 'dog', 'cat', 'dog', 'cat']
  g = duplicates.group(content, labels, near, max_distance=2)
  # 0 ~ 1 (same label), 1 ~ 2 (other label): 1 and 2 conflict; 0's own near copy agrees.
  assert g.group[0] == g.group[1] == g.group[2]
  assert g.conflicted.tolist() == [False, True, True, True, True, False]
  splits = duplicates.assigned_splits(g, 20, keep_conflicts=False)
  assert [s == '' for s in splits] == g.conflicted.tolist()
  assert '' not in duplicates.assigned_splits(g, 20, keep_conflicts=True)
  reasons = duplicates.conflict_reasons(g, [f'{i}.png' for i in range(6)], labels)
  assert set(reasons) == {1, 2, 3, 4}
  assert '4.png (dog)' in reasons[3]


def test_rows_group_by_content_only():
  g = duplicates.group([7, 8, 7, 9], ['a', 'a', 'b', 'a'])
  assert g.group[0] == g.group[2] != g.group[1]
  assert g.conflicted.tolist() == [True, False, True, False]


def test_conflicts_are_left_out_while_rare_and_kept_as_a_noisy_label_when_not():
  assert duplicates.conflicts_left_out(duplicates.GROUP, 20, 1050)  # 1.9 %
  assert duplicates.conflicts_left_out(duplicates.GROUP, 4, 80)  # a handful in small data
  assert not duplicates.conflicts_left_out(duplicates.GROUP, 9909, 14996)
  assert not duplicates.conflicts_left_out(duplicates.KEEP_CONFLICTS, 2, 1000)
  assert duplicates.conflict_properties(duplicates.GROUP, 531, 600) == {
    'num_label_conflicts': 531,
    'label_conflicts_kept': 1,
    'label_noisy': 1,
  }
  kept = duplicates.conflict_properties(duplicates.KEEP_CONFLICTS, 2, 1000)
  assert kept['label_conflicts_kept'] == 1 and kept['label_noisy'] == 0
  assert duplicates.conflict_properties(duplicates.GROUP, 0, 10)['label_conflicts_kept'] == 0
