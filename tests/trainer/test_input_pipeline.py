"""The Trainer's input function on real shards: shapes, dtypes, labels, compression, resizing."""

import os

import numpy as np
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from contracts import image_record
from tests import shards
from tests.conftest import image_bytes
from trainer import input_cache, input_pipeline
from trainer.data_spec import ImageSpec, TabularSpec

RNG = np.random.default_rng(1)


def _write_shards(folder, payload_images, encoding, compression, shards=2):
  """payload_images: list of (uint8 array, label). Returns the shard paths."""
  os.makedirs(folder, exist_ok=True)
  suffix = '.gz' if compression == 'GZIP' else ''
  paths = [os.path.join(folder, f'data-{i:05d}-of-{shards:05d}{suffix}') for i in range(shards)]
  writers = [tf.io.TFRecordWriter(p, options=compression or None) for p in paths]
  for i, (pixels, label) in enumerate(payload_images):
    mode = 'L' if pixels.ndim == 2 else 'RGB'
    encoded = encode.encode_image(image_bytes(pixels, 'PNG', mode), encoding)
    example = image_record.make_example(encoded, label, str(label), f'{label}/{i}.png')
    writers[i % shards].write(example.SerializeToString())
  for writer in writers:
    writer.close()
  return paths


def _images(n, shape):
  return [(RNG.integers(0, 256, size=shape, dtype=np.uint8), i % 3) for i in range(n)]


def _spec(height, width, channels, encoding, uniform):
  return ImageSpec(height, width, channels, ['0', '1', '2'], encoding, uniform)


@pytest.mark.parametrize('encoding', [image_record.ENCODED, image_record.RAW])
@pytest.mark.parametrize('compression', ['', 'GZIP'])
def test_uniform_images_round_trip_exactly(tmp_path, encoding, compression):
  images = _images(10, (6, 5, 3))
  paths = _write_shards(str(tmp_path), images, encoding, compression, shards=1)
  dataset = input_pipeline.image_dataset(paths, _spec(6, 5, 3, encoding, True), 4, training=False)
  batches = list(dataset.as_numpy_iterator())
  assert [b[0].shape for b in batches] == [(4, 6, 5, 3), (4, 6, 5, 3), (2, 6, 5, 3)]
  assert batches[0][0].dtype == np.uint8 and batches[0][1].dtype == np.int64
  pixels = np.concatenate([b[0] for b in batches])
  labels = np.concatenate([b[1] for b in batches])
  np.testing.assert_array_equal(pixels, np.stack([p for p, _ in images]))
  np.testing.assert_array_equal(labels, [label for _, label in images])


@pytest.mark.parametrize('encoding', [image_record.ENCODED, image_record.RAW])
def test_mixed_sizes_and_modes_come_out_at_one_shape(tmp_path, encoding):
  images = _images(3, (8, 8)) + _images(3, (16, 12, 3)) + _images(2, (8, 8, 3))
  paths = _write_shards(str(tmp_path), images, encoding, '', shards=2)
  for channels in (1, 3):
    spec = _spec(8, 8, channels, encoding, False)
    batches = list(input_pipeline.image_dataset(paths, spec, 8, training=False).as_numpy_iterator())
    assert len(batches) == 1 and batches[0][0].shape == (8, 8, 8, channels)
    assert sorted(batches[0][1].tolist()) == sorted(label for _, label in images)


def test_gray_to_rgb_replicates_the_channel(tmp_path):
  gray = RNG.integers(0, 256, size=(4, 4), dtype=np.uint8)
  for encoding in image_record.ENCODINGS:
    paths = _write_shards(str(tmp_path / encoding), [(gray, 1)], encoding, '', shards=1)
    images, _ = next(
      iter(input_pipeline.image_dataset(paths, _spec(4, 4, 3, encoding, False), 1, training=False))
    )
    np.testing.assert_array_equal(images.numpy()[0], np.repeat(gray[..., None], 3, axis=-1))


def test_training_mode_shuffles_repeats_and_keeps_full_batches(tmp_path):
  images = _images(10, (4, 4, 3))
  paths = _write_shards(str(tmp_path), images, image_record.ENCODED, '', shards=2)
  dataset = input_pipeline.image_dataset(
    paths, _spec(4, 4, 3, image_record.ENCODED, True), 4, training=True
  )
  labels = [batch[1] for batch in dataset.take(10).as_numpy_iterator()]
  assert all(len(b) == 4 for b in labels)  # 40 records from 10: it repeats, never a short batch
  counts = np.bincount(np.concatenate(labels), minlength=3)
  assert counts.sum() == 40 and counts.min() > 0


def test_mixed_compression_in_one_split_is_refused(tmp_path):
  plain = _write_shards(str(tmp_path / 'a'), _images(2, (4, 4, 3)), image_record.ENCODED, '', 1)
  gz = _write_shards(str(tmp_path / 'b'), _images(2, (4, 4, 3)), image_record.ENCODED, 'GZIP', 1)
  with pytest.raises(ValueError, match='mixes'):
    input_pipeline.serialized_batches(plain + gz, 2, training=False)


def test_shuffle_buffer_is_bounded_by_bytes(tmp_path):
  big = _write_shards(str(tmp_path / 'big'), _images(3, (200, 200, 3)), image_record.RAW, '', 1)
  small = _write_shards(str(tmp_path / 'small'), _images(3, (4, 4)), image_record.RAW, '', 1)
  assert input_pipeline.shuffle_buffer_size(big) == input_pipeline.SHUFFLE_BUFFER_BYTES // (
    len(next(iter(tf.data.TFRecordDataset(big))).numpy())
  )
  assert input_pipeline.shuffle_buffer_size(small) == input_pipeline.MAX_SHUFFLE_RECORDS


def test_tabular_float_label_is_thresholded(tmp_path):
  path = str(tmp_path / 'rows')
  rows = [(1.5, 'cash', 0.0), (2.5, 'card', 3.0), (0.5, '', 1.0)]
  with tf.io.TFRecordWriter(path) as writer:
    for fare, payment, tips in rows:
      feature = {
        'fare': tf.train.Feature(float_list=tf.train.FloatList(value=[fare])),
        'tips': tf.train.Feature(float_list=tf.train.FloatList(value=[tips])),
      }
      if payment:
        feature['payment'] = tf.train.Feature(
          bytes_list=tf.train.BytesList(value=[payment.encode()])
        )
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  spec = TabularSpec('tips', 0.0, 2, ['fare'], ['payment'])
  features, labels = next(iter(input_pipeline.tabular_dataset([path], spec, 3, training=False)))
  assert labels.numpy().tolist() == [0, 1, 1]
  # categories reach the model as hashed ids; a missing one is hashed as ''
  hashed = tf.strings.to_hash_bucket_fast([b'cash', b'card', b''], spec.hash_bins)
  assert features['payment'].numpy().tolist() == hashed.numpy().tolist()
  np.testing.assert_allclose(features['fare'].numpy(), [1.5, 2.5, 0.5])


@pytest.mark.parametrize(
  'values,spec,expected',
  [
    ([2, None, 0], TabularSpec('label', None, 3, ['x'], [], label_default='1'), [2, 1, 0]),
    ([2, None, 0], TabularSpec('label', None, 3, ['x'], []), [2, 0, 0]),  # no default: 0
    (
      [0.5, None, float('nan')],
      TabularSpec('label', 0.0, 2, ['x'], [], label_default='-1.0'),
      [1, 0, 0],
    ),
    (
      [b'setosa', None, b'virginica'],
      TabularSpec('label', None, 3, ['x'], [], [], ['other', 'setosa', 'virginica'], 'other'),
      [1, 0, 2],
    ),
  ],
)
def test_rows_without_a_label_take_the_label_default(tmp_path, values, spec, expected):
  path = str(tmp_path / 'rows')
  kind = {int: 'int64_list', float: 'float_list', bytes: 'bytes_list'}
  with tf.io.TFRecordWriter(path) as writer:
    for value in values:
      feature = {'x': tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}
      if value is not None:
        lists = {'int64_list': tf.train.Int64List, 'float_list': tf.train.FloatList}
        lists['bytes_list'] = tf.train.BytesList
        name = kind[type(value)]
        feature['label'] = tf.train.Feature(**{name: lists[name](value=[value])})
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )
  _, labels = next(iter(input_pipeline.tabular_dataset([path], spec, 3, training=False)))
  assert labels.numpy().tolist() == expected


def _write_rows(path, rows):
  with tf.io.TFRecordWriter(path) as writer:
    for i in range(rows):
      feature = {
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)])),
        'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
      }
      writer.write(
        tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
      )


def test_tabular_batches_are_cut_from_larger_parses_without_losing_order(tmp_path):
  """Eval: every row once, in order, batches of the asked size (the last one short); training:
  full batches only. Rows are parsed several batches at a time, then cut apart."""
  path = str(tmp_path / 'rows')
  rows = 5 * input_pipeline.TABULAR_BATCHES_PER_PARSE + 3  # more than one parse, plus a rest
  _write_rows(path, rows)
  spec = TabularSpec('label', None, 2, ['x'], [])
  batches = list(input_pipeline.tabular_dataset([path], spec, 5, training=False))
  assert [len(labels) for _, labels in batches] == [5] * (rows // 5) + [rows % 5]
  assert np.concatenate([f['x'].numpy() for f, _ in batches]).tolist() == list(
    map(float, range(rows))
  )
  training = input_pipeline.tabular_dataset([path], spec, 5, training=True).take(7)
  assert [len(labels) for _, labels in training] == [5] * 7


def test_max_int_label(tmp_path):
  paths = _write_shards(
    str(tmp_path),
    [(np.zeros((2, 2), np.uint8), n) for n in (4, 9, 2)],
    image_record.ENCODED,
    '',
    shards=2,
  )
  assert input_pipeline.max_int_label(paths, 'label') == 9


def _labels_read(files, guard, spec):
  dataset = input_pipeline.image_dataset(files, spec, 64, training=False, guard=guard)
  return [int(label) for _, labels in dataset for label in labels.numpy()]


@pytest.mark.parametrize('where', ['payload', 'length header'])
def test_damaged_record_is_the_only_one_lost(tmp_path, where):
  """The acceptance case: 500 records, the 11th damaged → 499 through the input function."""
  records = shards.digit_records()
  path = shards.write_shard(str(tmp_path / 'data-00000-of-00001'), records)
  start = shards.record_offset(open(path, 'rb').read(), shards.DAMAGED_INDEX)
  shards.damage(path, start + (20 if where == 'payload' else 3))
  guard = input_pipeline.ShardGuard(str(tmp_path / 'salvage'))
  spec = ImageSpec(16, 16, 1, [str(i) for i in range(10)], image_record.ENCODED, uniform=False)
  labels = _labels_read(path, guard, spec)
  expected = [i % 10 for i in range(shards.RECORDS) if i != shards.DAMAGED_INDEX]
  assert labels == expected
  (report,) = guard.reports
  assert (report.good, report.corrupt, report.path) == (shards.RECORDS - 1, 1, path)
  assert report.salvaged_to.startswith(str(tmp_path / 'salvage'))
  # A second dataset over the same shard reuses the scan.
  assert _labels_read(path, guard, spec) == expected and len(guard.reports) == 1


def test_clean_shards_are_read_in_place(tmp_path):
  paths = _write_shards(str(tmp_path), _images(6, (4, 4)), image_record.ENCODED, '')
  guard = input_pipeline.ShardGuard(str(tmp_path / 'salvage'))
  assert guard(paths) == paths and all(r.clean and not r.salvaged_to for r in guard.reports)
  assert not os.path.exists(tmp_path / 'salvage')


def test_shards_of_both_schema_versions_train_together(tmp_path):
  """Version 1 records (no image_id, schema_version 1) read alongside current ones."""
  images = _images(6, (4, 4))
  current = _write_shards(str(tmp_path / 'v2'), images, image_record.ENCODED, '', shards=1)
  old = str(tmp_path / 'v1.tfrecord')
  with tf.io.TFRecordWriter(old) as writer:
    for pixels, label in images:
      encoded = encode.encode_image(image_bytes(pixels, 'PNG', 'L'))
      example = image_record.make_example(encoded, label, str(label), 'unused')
      del example.features.feature[image_record.IMAGE_ID_KEY]
      example.features.feature[image_record.SCHEMA_VERSION_KEY].int64_list.value[:] = [1]
      writer.write(example.SerializeToString())
  versions = {
    tf.train.Example.FromString(r.numpy())
    .features.feature[image_record.SCHEMA_VERSION_KEY]
    .int64_list.value[0]
    for r in tf.data.TFRecordDataset([old] + current)
  }
  assert versions == set(image_record.READABLE_VERSIONS)
  dataset = input_pipeline.image_dataset(
    [old] + current, _spec(4, 4, 1, image_record.ENCODED, True), 4, training=False
  )
  labels = [int(label) for _, batch in dataset for label in batch.numpy()]
  assert sorted(labels) == sorted([label for _, label in images] * 2)


def test_augmentation_moves_pixels_only_while_training(tmp_path):
  images = [(RNG.integers(0, 256, size=(16, 16), dtype=np.uint8), i % 3) for i in range(32)]
  paths = _write_shards(str(tmp_path), images, image_record.RAW, '', shards=1)
  spec = _spec(16, 16, 1, image_record.RAW, True)
  evaluation = input_pipeline.image_dataset(paths, spec, 32, training=False, augment=True)
  batch, _ = next(iter(evaluation))
  originals = {pixels.tobytes(): label for pixels, label in images}
  assert all(img[..., 0].tobytes() in originals for img in batch.numpy())  # untouched for eval
  training = input_pipeline.image_dataset(paths, spec, 32, training=True, augment=True)
  batch, labels = next(iter(training))
  assert batch.shape == (32, 16, 16, 1) and batch.dtype == tf.uint8
  moved = [img for img in batch.numpy() if img[..., 0].tobytes() not in originals]
  assert len(moved) > 16  # a shift of 0 in both axes and no flip is rare (1 in 2 × 5 × 5)
  for image, label in zip(batch.numpy(), labels.numpy()):
    # Every augmented image is a crop of its (possibly mirrored) original, edge padded.
    candidates = [p for p, image_label in images if image_label == label]
    assert any(
      _is_shifted(image[..., 0], p) or _is_shifted(image[..., 0], p[:, ::-1]) for p in candidates
    )


def _is_shifted(image, original, pad=2):
  padded = np.pad(original, pad, mode='symmetric')
  return any(
    (padded[y : y + 16, x : x + 16] == image).all()
    for y in range(2 * pad + 1)
    for x in range(2 * pad + 1)
  )


def _remove(paths):
  for path in paths:
    os.remove(path)


def test_cached_images_are_read_once_and_drawn_anew_every_epoch(tmp_path):
  """After the first pass the shards can go: later epochs come from memory, every image still
  in them, each epoch in a new random order."""
  count, batch_size = 48, 4  # an epoch: 12 batches
  images = [(np.full((4, 4, 3), i, np.uint8), i % 3) for i in range(count)]
  paths = _write_shards(str(tmp_path), images, image_record.RAW, '', shards=3)
  spec = _spec(4, 4, 3, image_record.RAW, True)
  dataset = input_pipeline.image_dataset(paths, spec, batch_size, training=True, cache=True)
  iterator = iter(dataset)
  steps = count // batch_size
  first = [next(iterator) for _ in range(steps)]
  _remove(paths)
  epochs = [first] + [[next(iterator) for _ in range(steps)] for _ in range(5)]
  seen = [
    [int(pixel) for batch, _ in epoch for pixel in batch.numpy()[:, 0, 0, 0]] for epoch in epochs
  ]
  for epoch, values in zip(epochs, seen):
    labels = [int(label) for _, batch in epoch for label in batch.numpy()]
    assert labels == [value % 3 for value in values]  # pixels and labels stay paired
  batches = [values[i : i + batch_size] for values in seen for i in range(0, count, batch_size)]
  assert all(len(set(batch)) == batch_size for batch in batches)  # a slice of one permutation
  # Every image once an epoch. The gather is unordered, so a batch of the next epoch may come
  # before the last ones of this epoch: over 6 epochs' batches, each image 5 to 7 times.
  times = np.bincount([value for values in seen for value in values], minlength=count)
  assert len(times) == count and times.min() >= 5 and times.max() <= 7, times
  assert len({tuple(values) for values in seen}) == 6  # a new order every epoch


def test_cached_evaluation_repeats_the_same_batches(tmp_path):
  images = _images(10, (5, 5, 3))
  paths = _write_shards(str(tmp_path), images, image_record.ENCODED, '', shards=2)
  spec = _spec(5, 5, 3, image_record.ENCODED, True)
  dataset = input_pipeline.image_dataset(paths, spec, 4, training=False, cache=True)
  first = [labels.tolist() for _, labels in dataset.as_numpy_iterator()]
  _remove(paths)
  assert [labels.tolist() for _, labels in dataset.as_numpy_iterator()] == first
  assert sorted(sum(first, [])) == sorted(label for _, label in images)


def test_cached_tabular_batches_come_from_memory_in_a_new_order(tmp_path):
  path = str(tmp_path / 'rows')
  _write_rows(path, 40)
  spec = TabularSpec('label', None, 2, ['x'], [])
  iterator = iter(input_pipeline.tabular_dataset([path], spec, 5, training=True, cache=True))
  first = [next(iterator) for _ in range(8)]
  _remove([path])
  epochs = [first] + [[next(iterator) for _ in range(8)] for _ in range(3)]
  orders = []
  for epoch in epochs:
    batches = [tuple(features['x'].numpy().astype(int)) for features, _ in epoch]
    assert sorted(x for batch in batches for x in batch) == list(range(40))
    orders.append(batches)
  assert sorted(orders[1]) == sorted(orders[0])  # the same batches: their rows stay together
  assert len({tuple(order) for order in orders}) > 1  # in a new order


@pytest.mark.parametrize(
  'mode, decoded, expected',
  [('auto', 100, True), ('auto', 101, False), ('memory', 10**12, True), ('off', 1, False)],
)
def test_cache_decision_follows_the_mode_and_the_budget(mode, decoded, expected):
  decision = input_cache.decide(mode, decoded, budget_bytes=100)
  assert decision.used is expected
  words = decision.describe()
  assert words.startswith('input held in memory' if expected else 'input not cached')
  if mode == 'auto' and not expected:
    assert 'above the 0 MB budget' in words and '--input-cache memory' in words


def test_cache_budget_is_a_share_of_real_memory():
  assert 0 < input_cache.memory_bytes() <= os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
  with pytest.raises(ValueError, match='auto, memory or off'):
    input_cache.decide('sometimes', 1)


@pytest.mark.parametrize('side, decoded', [(40, 40), (80, 40), (160, 40), (320, 40), (330, 42)])
def test_large_jpegs_are_decoded_at_the_smallest_scale_that_covers_the_model(side, decoded):
  """libjpeg's 1/2, 1/4, 1/8 scales: never below the model's 40x40, so resizing only shrinks."""
  pixels = np.full((side, side, 3), 128, np.uint8)
  payload = tf.constant(image_bytes(pixels, 'JPEG', 'RGB'))
  spec = _spec(40, 40, 3, image_record.ENCODED, False)
  assert input_pipeline.decode_jpeg_at_least(payload, spec).shape == (decoded, decoded, 3)
  assert input_pipeline.decode_encoded(payload[None], spec).shape == (1, 40, 40, 3)
