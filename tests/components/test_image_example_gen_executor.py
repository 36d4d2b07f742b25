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
    assert len(shards) == min(counts.values()) and 0 < count
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

  example_gen.write_images(str(tmp_path / 'data'), 20)  # 224x224 JPEG crops of real photos
  example_gen.run_example_gen(str(tmp_path / 'data'), str(tmp_path / 'out'), 0, max_image_side=100)
  with open(tmp_path / 'out' / 'image_meta.json') as f:
    meta = json.load(f)
  assert meta['max_image_side'] == 100 and meta['most_common_size'] == [100, 100]
  records = tf.data.TFRecordDataset(
    [str(p) for p in (tmp_path / 'out').glob('Split-*/data-*')]
  ).batch(64)
  parsed = tf.io.parse_example(next(iter(records)), image_record.parse_spec())
  assert len(parsed[image_record.HEIGHT_KEY]) == 20
  for payload in parsed[image_record.IMAGE_KEY].numpy():
    assert tf.io.decode_jpeg(payload).shape == (100, 100, 3)
