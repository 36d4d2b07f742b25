"""ImageExampleGen's executor in process (in_memory Beam, as bench/example_gen.py runs it) on tiny
trees: shard count and classes."""

import json
import os
import shutil

import pytest

from bench import example_gen
from contracts.errors import UnusableData
from tests.conftest import write_digits_subset


def _run(folder: str, out: str, shard_size_mb: float):
  example_gen.run_example_gen(folder, out, workers=0, shard_size_mb=shard_size_mb)


def test_a_tiny_shard_size_never_writes_empty_shards(tmp_path):
  data = write_digits_subset(str(tmp_path / 'data'), per_class=3)  # 30 images, ~6 eval
  _run(data, str(tmp_path / 'out'), shard_size_mb=1e-6)  # asks for one shard per record
  with open(tmp_path / 'out' / 'image_meta.json') as f:
    counts = json.load(f)['split_counts']
  for split, count in counts.items():
    shards = sorted(os.listdir(tmp_path / 'out' / f'Split-{split}'))
    assert 1 < len(shards) <= min(counts.values()) and 0 < count
    assert all(os.path.getsize(tmp_path / 'out' / f'Split-{split}' / s) for s in shards), split


def test_one_class_left_after_exclusions_is_unusable(tmp_path):
  data = write_digits_subset(str(tmp_path / 'data'), per_class=3)
  for name in os.listdir(data):
    if name not in ('0', '1'):
      shutil.rmtree(os.path.join(data, name))
  for name in os.listdir(os.path.join(data, '1')):
    with open(os.path.join(data, '1', name), 'wb') as f:
      f.write(b'')  # zero bytes: excluded
  with pytest.raises(UnusableData) as raised:
    _run(data, str(tmp_path / 'out'), shard_size_mb=64.0)
  assert str(raised.value).startswith("only class '0' has images that decode: 3 file(s) excluded")
  with open(tmp_path / 'out' / 'excluded_files.csv') as f:
    assert f.read().count('the file is empty (0 bytes)') == 3


def test_max_image_side_stores_camera_size_photos_downscaled(tmp_path):
  import tensorflow as tf

  from contracts import image_record
  from records import image_codec

  example_gen.write_images(str(tmp_path / 'data'), 20)  # 224x224 JPEG crops of real photos
  example_gen.run_example_gen(str(tmp_path / 'data'), str(tmp_path / 'out'), 0, max_image_side=100)
  with open(tmp_path / 'out' / 'image_meta.json') as f:
    meta = json.load(f)
  assert meta['max_image_side'] == 100 and meta['most_common_size'] == [100, 100]
  records = tf.data.TFRecordDataset(
    [str(p) for p in (tmp_path / 'out').glob('Split-*/data-*')]
  ).batch(64)
  parsed = tf.io.parse_example(next(iter(records)), image_codec.parse_spec())
  assert len(parsed[image_record.HEIGHT_KEY]) == 20
  for payload in parsed[image_record.IMAGE_KEY].numpy():
    assert tf.io.decode_jpeg(payload).shape == (100, 100, 3)


def test_phone_photos_are_stored_upright_and_other_formats_as_png(tmp_path):
  import csv
  import io

  import numpy as np
  import PIL.Image
  import tensorflow as tf

  from records import image_codec

  upright = np.linspace(0, 255, 40 * 24 * 3).reshape(40, 24, 3).astype(np.uint8)  # 40 high
  exif = PIL.Image.Exif()
  exif[0x0112] = 6  # stored a quarter turn counter-clockwise: 24 high, 40 wide in the file
  data = tmp_path / 'data'
  for name in ('phone', 'a', 'b'):
    os.makedirs(data / name, exist_ok=True)
  for i in range(3):
    PIL.Image.fromarray(np.ascontiguousarray(np.rot90(upright, 1))).save(
      data / 'phone' / f'{i}.jpg', 'JPEG', exif=exif.tobytes(), quality=95
    )
  PIL.Image.fromarray(upright).save(data / 'phone' / 'plain.jpg', 'JPEG', quality=95)
  for i, suffix in enumerate(('webp', 'bmp', 'gif', 'tif', 'TIFF')):
    PIL.Image.fromarray(upright).save(
      data / 'ab'[i % 2] / f'{i}.{suffix}', **({'lossless': True} if suffix == 'webp' else {})
    )
  (data / 'b' / 'bad.webp').write_bytes(b'RIFF0000WEBPjunk')
  # One picture in every class: conflicts, kept here (test_image_example_gen_duplicates.py).
  example_gen.run_example_gen(str(data), str(tmp_path / 'out'), 0, duplicates='keep-conflicts')
  with open(tmp_path / 'out' / 'image_meta.json') as f:
    meta = json.load(f)
  assert meta['num_turned_upright'] == 3
  assert meta['most_common_size'] == [40, 24] and meta['uniform_size'] is True
  assert sum(meta['split_counts'].values()) == 9 and meta['excluded'] == 1
  with open(tmp_path / 'out' / 'excluded_files.csv') as f:
    (row,) = list(csv.DictReader(f))
  assert row['path'] == 'b/bad.webp' and row['reason'].startswith('cannot decode image')
  spec = dict(image_codec.parse_spec(), image_id=tf.io.FixedLenFeature([], tf.string))
  records = tf.data.TFRecordDataset([str(p) for p in (tmp_path / 'out').glob('Split-*/data-*')])
  parsed = tf.io.parse_example(next(iter(records.batch(64))), spec)
  for image_id, payload in zip(parsed['image_id'].numpy(), parsed['image'].numpy()):
    name = image_id.decode()
    if name.startswith('phone/') and name != 'phone/plain.jpg':
      assert payload != (data / name).read_bytes()  # re-encoded upright
    with PIL.Image.open(io.BytesIO(payload)) as stored:
      assert stored.format == ('JPEG' if name.endswith('.jpg') else 'PNG'), name
    decoded = tf.io.decode_image(payload).numpy()
    assert decoded.shape == (40, 24, 3) and np.abs(decoded.astype(float) - upright).mean() < 2


def test_unlabeled_images_go_to_one_split_without_labels_junk_listed(tmp_path):
  import tensorflow as tf

  from contracts import image_record

  data = write_digits_subset(str(tmp_path / 'data'), per_class=2)  # 20 images in class folders
  os.rename(
    os.path.join(data, '3', os.listdir(os.path.join(data, '3'))[0]), tmp_path / 'data' / 'top.png'
  )
  (tmp_path / 'data' / '4' / 'broken.jpg').write_bytes(b'not a jpeg')
  (tmp_path / 'data' / 'notes.txt').write_text('not an image')
  out = tmp_path / 'out'
  example_gen.run_example_gen(data, str(out), 0, shard_size_mb=1e-6, unlabeled_split='infer')
  assert sorted(os.listdir(out)) == [
    '.tmp',
    'Split-infer',
    'excluded_files.csv',
    'image_meta.json',
    'labels.txt',
  ]
  with open(out / 'image_meta.json') as f:
    meta = json.load(f)
  assert meta['split_counts'] == {'infer': 20} and meta['labels'] == []
  records = [
    tf.train.Example.FromString(r).features.feature
    for r in tf.data.TFRecordDataset(
      [str(p) for p in (out / 'Split-infer').iterdir()]
    ).as_numpy_iterator()
  ]
  assert len(records) == 20
  assert not any(image_record.LABEL_KEY in r or image_record.LABEL_NAME_KEY in r for r in records)
  ids = {r[image_record.IMAGE_ID_KEY].bytes_list.value[0].decode() for r in records}
  assert 'top.png' in ids and all(i.count('/') == 1 for i in ids - {'top.png'})
  with open(out / 'excluded_files.csv') as f:
    excluded = f.read()
  assert '4/broken.jpg' in excluded and 'notes.txt,"not an image file' in excluded
