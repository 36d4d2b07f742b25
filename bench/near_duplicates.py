"""Near-duplicate images: how many edited copies of a photo ImageExampleGen's perceptual hashes
(encode.near_hashes: as loaded and mirrored, both checked) put within duplicates.NEAR_DISTANCE bits of the original, how many pairs of
distinct images it wrongly puts there, what that does to the groups (duplicates.group), what
hashing costs per image and what grouping 100,000 images costs.

  .venv/bin/python -m bench.near_duplicates [--quick] [--rounds N] [--candidates A,B]
      [--no-scale] [--json OUT]

Images: the real photos found offline (scikit-learn's china.jpg and flower.jpg, matplotlib's
grace_hopper.jpg, scipy's face where installed):
  photos   random square crops of them (160 px to the photo's shorter side), resized to 224x224,
           half mirrored, JPEG quality 90 (as bench/input_data.py's); class = the source photo;
  tiles    small tiles of them at their own resolution: squares of 32–64 px, half mirrored,
           JPEG quality 90; class = the source photo;
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
JPEG kept as it is included). Candidates, by monkeypatching encode.near_hashes: `near_hashes`
(the project's: both hashes checked), `smaller_of_two` (the rule it replaced: the smaller of the
two kept), `dhash_9x8` (the difference hash before), `phash_32x32` (the classic pHash: resampled
to 32x32 first). For each, at thresholds T in THRESHOLDS:
  recall       the share of edited copies within T bits of their original, per set and edit;
  false pairs  the share of pairs of distinct images within T bits: photos (and tiles) of the
               same class whose crop windows overlap less than 30% (IoU; mirrored or not: the
               hashes see a mirror as the image), of different classes; mosaics; digits within
               a class and across;
  groups       duplicates.group over the photos and all their copies (labels = class): the
               share of originals grouped with another original, the largest group (in
               originals), the conflicted share; over the digits: the share in a group of 2 or
               more, the largest group, the conflicted share; over the digits saved as JPEG.
Cost, each as the best of 5 runs: µs per near_hashes on a 224x224 image at full size and on a
1/8-drafted JPEG (28x28), against encode_file on the same JPEG.
Grouping at scale, unless --no-scale (hashes of 100,000 images, near_hashes on the image directly,
without encoding):
  distinct  mosaics (96x96, 3x3 patches of the photos), 1 in 10 followed by an edited copy
            (crop 3%, brightness +10%), 1 in 50 by an exact copy; 10 labels, copies keep theirs;
  views     random crops (48 px to the whole photo, any aspect, half mirrored) of the same few
            photos: overlapping views of one scene, so near pairs grow with n², a worst case.
duplicates.group at NEAR_DISTANCE on the first 10k, 50k and 100k: seconds (median of the rounds),
peak traced memory (tracemalloc, one extra run), µs per image, and the ratio of µs per image at
100k over 10k (1 = linear, 10 = quadratic), with its lowest and highest round. duplicates.near_pairs
alone at 100k at T = 4, 6, 8 on both hashes of every image (T // 2 + 1 pieces, each hash probing its piece and the piece with
one bit flipped), against its first version (T + 1 pieces compared whole:
near_duplicate_grouping.near_pairs_exact_pieces), checked to find the same pairs.
"""

import io
import os
import time
import timeit

import numpy as np
import PIL.Image

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')

from bench import figures as figures_file
from bench.near_duplicate_grouping import grouping_at_scale, scale_sets
from bench.near_duplicate_hashes import (
  THRESHOLDS,
  bits,
  candidates,
  hashing_with,
  pair_distances,
  shares_within,
  stored,
  window_overlap,
)
from bench.near_duplicate_images import (
  DIGIT_EDITS,
  SIDE,
  decoded,
  digit_images,
  jpeg,
  large_crops,
  mosaic,
  photo_crops,
  photo_edits,
  png,
  source_photos,
  tile_crops,
)

DISTINCT_IOU = 0.3  # photo crops overlapping less than this are distinct images
SCALE_SIZES = (10_000, 50_000, 100_000)


# -- quality --------------------------------------------------------------------------------------


def crop_false_pairs(set_name, images, hashed):
  """{kind of pair: shares within each T, and its number of pairs} of distinct crops of one set
  (photos or tiles): same class with windows overlapping < DISTINCT_IOU, and different classes."""
  windows = [w for _, _, w in images]
  classes = np.array([c for _, c, _ in images])
  i, j, d = pair_distances(hashed[1])
  iou = np.array([window_overlap(windows[a], windows[b]) for a, b in zip(i, j)])
  same = classes[i] == classes[j]
  all_i, all_j = np.triu_indices(len(images), 1)
  all_same = classes[all_i] == classes[all_j]
  distinct_same_total = sum(
    1
    for a, b in zip(all_i[all_same], all_j[all_same])
    if window_overlap(windows[a], windows[b]) < DISTINCT_IOU
  )
  kinds = {
    f'{set_name}, same class, distinct views': (same & (iou < DISTINCT_IOU), distinct_same_total),
    f'{set_name}, same class, overlapping views (not false)': (
      same & (iou >= DISTINCT_IOU),
      int(all_same.sum()) - distinct_same_total,
    ),
    f'{set_name}, different classes': (~same, int((~all_same).sum())),
  }
  found = {}
  for kind, (mask, total) in kinds.items():
    found[kind] = shares_within(d[mask], total)
    found[kind]['pairs'] = total
  return found


def quality(sets, digits, digit_labels, rng, mosaics, names=None):
  """Recall, false pairs and groups per candidate (the module docstring)."""
  from components import duplicates

  edits = photo_edits(rng)
  # The edited copies, made once: {set: {edit: [bytes]}}.
  copies = {
    name: {edit: [make(decoded(data)) for data, _, _ in images] for edit, make in edits.items()}
    for name, images in sets.items()
  }
  digit_pngs = [png(im) for im in digits]
  digit_jpegs = [jpeg(im) for im in digits]
  digit_copies = {edit: [make(im) for im in digits] for edit, make in DIGIT_EDITS.items()}
  photos = sets['photos']
  windows = [w for _, _, w in photos]
  classes = np.array([c for _, c, _ in photos])

  results = {}
  for name, function in candidates(names).items():
    with hashing_with(function):
      result = {'recall': {}, 'false_pairs': {}, 'groups': {}}
      hashed = {}
      for set_name, images in sets.items():
        hashed[set_name] = content, near = stored([data for data, _, _ in images])
        result['recall'][set_name] = {}
        for edit, datas in copies[set_name].items():
          d = duplicates.near_distance(near, stored(datas)[1])
          result['recall'][set_name][edit] = shares_within(d, len(d))
        if set_name == 'photos':
          photo_content, photo_near = content, near
          photo_copies = {edit: stored(datas) for edit, datas in copies[set_name].items()}
      for set_name in ('photos', 'tiles'):
        result['false_pairs'].update(crop_false_pairs(set_name, sets[set_name], hashed[set_name]))
      _, mosaic_near = stored(mosaics)
      _, _, md = pair_distances(mosaic_near)
      total = len(mosaics) * (len(mosaics) - 1) // 2
      result['false_pairs']['mosaics (distinct)'] = shares_within(md, total)
      result['false_pairs']['mosaics (distinct)']['pairs'] = total
      digit_content, digit_near = stored(digit_pngs)
      di, dj, dd = pair_distances(digit_near)
      same = digit_labels[di] == digit_labels[dj]
      all_i, all_j = np.triu_indices(len(digits), 1)
      all_same = digit_labels[all_i] == digit_labels[all_j]
      for kind, mask, total in (
        ('digits, same class', same, int(all_same.sum())),
        ('digits, different classes', ~same, int((~all_same).sum())),
      ):
        result['false_pairs'][kind] = shares_within(dd[mask], total)
        result['false_pairs'][kind]['pairs'] = total
      result['recall']['digits'] = {}
      for edit, datas in digit_copies.items():
        d = duplicates.near_distance(digit_near, stored(datas)[1])
        result['recall']['digits'][edit] = shares_within(d, len(d))

      # Groups: photos with every copy (labels = class), the digits, the digits as JPEGs.
      n = len(photos)
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
              window_overlap(windows[a], windows[b]) < DISTINCT_IOU for b in group_members if b != a
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
        'photos': float((bits(photo_near[:, 0]) == 32).mean()),
        'digits': float((bits(digit_near[:, 0]) == 32).mean()),
      }
      results[name] = result
  return results


# -- cost -----------------------------------------------------------------------------------------


def hash_cost(jpegs, names=None):
  """µs per call (best of 5) of the candidates and content_hash at full size and 1/8 drafted, and
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
  for name, function in candidates(names).items():
    figures[f'{name}_full_224'] = per_call(function, full)
    figures[f'{name}_drafted_28'] = per_call(function, drafted)
  figures['content_hash_drafted_28'] = per_call(encode.content_hash, drafted)
  figures['encode_file_jpeg_224'] = per_call(encode.encode_file, jpegs, number=5)
  if 'near_hashes_drafted_28' in figures:
    figures['near_hashes_drafted_over_encode_file'] = (
      figures['near_hashes_drafted_28'] / figures['encode_file_jpeg_224']
    )
    figures['with_content_hash_drafted_over_encode_file'] = (
      figures['near_hashes_drafted_28'] + figures['content_hash_drafted_28']
    ) / figures['encode_file_jpeg_224']
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
  parser = figures_file.parser(
    __doc__, quick='40 photos and tiles, 300 mosaics, 2k/5k/10k hashes, 1 round'
  )
  parser.add_argument('--rounds', type=int, default=0, help='grouping rounds (default 3)')
  parser.add_argument(
    '--candidates',
    type=lambda text: text.split(','),
    help='only these candidates, comma-separated (default: all)',
  )
  parser.add_argument('--no-scale', action='store_true', help='leave out grouping at scale (long)')
  args = parser.parse_args(argv)
  from components import duplicates

  rng = np.random.default_rng(0)
  rounds = args.rounds or (1 if args.quick else 3)
  photo_count, tile_count, large_count, mosaic_count = (
    (40, 40, 8, 300) if args.quick else (400, 400, 40, 3000)
  )
  sizes = (2_000, 5_000, 10_000) if args.quick else SCALE_SIZES
  started = time.monotonic()
  photos = source_photos()
  sets = {
    'photos': photo_crops(photos, photo_count, rng),
    'tiles': tile_crops(photos, tile_count, rng),
    'large': large_crops(photos, large_count, rng),
  }
  mosaics = [jpeg(mosaic(photos, rng, SIDE // 3)) for _ in range(mosaic_count)]
  digits, digit_labels = digit_images()
  results = quality(sets, digits, digit_labels, rng, mosaics, args.candidates)
  print(f'quality measured ({time.monotonic() - started:.0f} s)', flush=True)
  cost = hash_cost([data for data, _, _ in sets['photos'][:50]], args.candidates)
  scale = (
    grouping_at_scale(scale_sets(photos, sizes[-1], rng), sizes, rounds)
    if not args.no_scale
    else {}
  )
  chosen = str(duplicates.NEAR_DISTANCE)
  figures = {
    'near_distance': duplicates.NEAR_DISTANCE,
    'photos': [name for name, _ in photos],
    'counts': {
      'photos': photo_count,
      'tiles': tile_count,
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
    f'{photo_count} photo crops, {tile_count} tiles, {large_count} large, {mosaic_count} mosaics, '
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
  if scale:
    print(f'grouping (duplicates.group at T = {chosen}), median of {rounds} round(s):')
  for name in ('distinct', 'views') if scale else ():
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
  for t, f in scale.get('near_pairs_distinct', {}).items():
    print(
      f'  near_pairs at T={t}, {sizes[-1]:,} distinct: {f["near_pairs_s"]:.2f} s, '
      f'first version (T + 1 pieces) {f["exact_pieces_s"]:.2f} s ({f["pairs"]:,} pairs, same pairs)'
    )
  print(f'({figures["seconds"]:.0f} s)')
  figures_file.save(figures, args.json)


if __name__ == '__main__':
  main()
