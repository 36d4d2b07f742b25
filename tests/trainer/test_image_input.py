"""trainer/image_input.py on real shards: shapes, dtypes, labels, compression, resizing,
augmentation, the cache."""

import os

import numpy as np
import pytest
import tensorflow as tf

from components.image_example_gen import encode
from contracts import image_record
from records import image_codec
from tests.conftest import image_bytes
from tests.trainer.image_shards import RNG, image_spec, random_images, write_image_shards
from trainer import image_input


@pytest.mark.parametrize('encoding', [image_record.ENCODED, image_record.RAW])
@pytest.mark.parametrize('compression', ['', 'GZIP'])
def test_uniform_images_round_trip_exactly(tmp_path, encoding, compression):
  images = random_images(10, (6, 5, 3))
  paths = write_image_shards(str(tmp_path), images, encoding, compression, shards=1)
  dataset = image_input.image_dataset(paths, image_spec(6, 5, 3, encoding, True), 4, training=False)
  batches = list(dataset.as_numpy_iterator())
  assert [b[0].shape for b in batches] == [(4, 6, 5, 3), (4, 6, 5, 3), (2, 6, 5, 3)]
  assert batches[0][0].dtype == np.uint8 and batches[0][1].dtype == np.int64
  pixels = np.concatenate([b[0] for b in batches])
  labels = np.concatenate([b[1] for b in batches])
  np.testing.assert_array_equal(pixels, np.stack([p for p, _ in images]))
  np.testing.assert_array_equal(labels, [label for _, label in images])


@pytest.mark.parametrize('encoding', [image_record.ENCODED, image_record.RAW])
def test_mixed_sizes_and_modes_come_out_at_one_shape(tmp_path, encoding):
  images = random_images(3, (8, 8)) + random_images(3, (16, 12, 3)) + random_images(2, (8, 8, 3))
  paths = write_image_shards(str(tmp_path), images, encoding, '', shards=2)
  for channels in (1, 3):
    spec = image_spec(8, 8, channels, encoding, False)
    batches = list(image_input.image_dataset(paths, spec, 8, training=False).as_numpy_iterator())
    assert len(batches) == 1 and batches[0][0].shape == (8, 8, 8, channels)
    assert sorted(batches[0][1].tolist()) == sorted(label for _, label in images)


def test_gray_to_rgb_replicates_the_channel(tmp_path):
  gray = RNG.integers(0, 256, size=(4, 4), dtype=np.uint8)
  for encoding in image_record.ENCODINGS:
    paths = write_image_shards(str(tmp_path / encoding), [(gray, 1)], encoding, '', shards=1)
    images, _ = next(
      iter(
        image_input.image_dataset(paths, image_spec(4, 4, 3, encoding, False), 1, training=False)
      )
    )
    np.testing.assert_array_equal(images.numpy()[0], np.repeat(gray[..., None], 3, axis=-1))


def test_training_mode_shuffles_repeats_and_keeps_full_batches(tmp_path):
  images = random_images(10, (4, 4, 3))
  paths = write_image_shards(str(tmp_path), images, image_record.ENCODED, '', shards=2)
  dataset = image_input.image_dataset(
    paths, image_spec(4, 4, 3, image_record.ENCODED, True), 4, training=True
  )
  labels = [batch[1] for batch in dataset.take(10).as_numpy_iterator()]
  assert all(len(b) == 4 for b in labels)  # 40 records from 10: it repeats, never a short batch
  counts = np.bincount(np.concatenate(labels), minlength=3)
  assert counts.sum() == 40 and counts.min() > 0


def test_shards_of_both_schema_versions_train_together(tmp_path):
  """Version 1 records (no image_id, schema_version 1) read alongside current ones."""
  images = random_images(6, (4, 4))
  current = write_image_shards(str(tmp_path / 'v2'), images, image_record.ENCODED, '', shards=1)
  old = str(tmp_path / 'v1.tfrecord')
  with tf.io.TFRecordWriter(old) as writer:
    for pixels, label in images:
      encoded = encode.encode_image(image_bytes(pixels, 'PNG', 'L'))
      example = image_codec.make_example(encoded, label, str(label), 'unused')
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
  dataset = image_input.image_dataset(
    [old] + current, image_spec(4, 4, 1, image_record.ENCODED, True), 4, training=False
  )
  labels = [int(label) for _, batch in dataset for label in batch.numpy()]
  assert sorted(labels) == sorted([label for _, label in images] * 2)


def test_augmentation_moves_pixels_only_while_training(tmp_path):
  images = [(RNG.integers(0, 256, size=(16, 16), dtype=np.uint8), i % 3) for i in range(32)]
  paths = write_image_shards(str(tmp_path), images, image_record.RAW, '', shards=1)
  spec = image_spec(16, 16, 1, image_record.RAW, True)
  evaluation = image_input.image_dataset(paths, spec, 32, training=False, augment=True)
  batch, _ = next(iter(evaluation))
  originals = {pixels.tobytes(): label for pixels, label in images}
  assert all(img[..., 0].tobytes() in originals for img in batch.numpy())  # untouched for eval
  training = image_input.image_dataset(paths, spec, 32, training=True, augment=True)
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
  paths = write_image_shards(str(tmp_path), images, image_record.RAW, '', shards=3)
  spec = image_spec(4, 4, 3, image_record.RAW, True)
  dataset = image_input.image_dataset(paths, spec, batch_size, training=True, cache=True)
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
  images = random_images(10, (5, 5, 3))
  paths = write_image_shards(str(tmp_path), images, image_record.ENCODED, '', shards=2)
  spec = image_spec(5, 5, 3, image_record.ENCODED, True)
  dataset = image_input.image_dataset(paths, spec, 4, training=False, cache=True)
  first = [labels.tolist() for _, labels in dataset.as_numpy_iterator()]
  _remove(paths)
  assert [labels.tolist() for _, labels in dataset.as_numpy_iterator()] == first
  assert sorted(sum(first, [])) == sorted(label for _, label in images)


@pytest.mark.parametrize('side, decoded', [(40, 40), (80, 40), (160, 40), (320, 40), (330, 42)])
def test_large_jpegs_are_decoded_at_the_smallest_scale_that_covers_the_model(side, decoded):
  """libjpeg's 1/2, 1/4, 1/8 scales: never below the model's 40x40, so resizing only shrinks."""
  pixels = np.full((side, side, 3), 128, np.uint8)
  payload = tf.constant(image_bytes(pixels, 'JPEG', 'RGB'))
  spec = image_spec(40, 40, 3, image_record.ENCODED, False)
  assert image_input.decode_jpeg_at_least(payload, spec).shape == (decoded, decoded, 3)
  assert image_input.decode_encoded(payload[None], spec).shape == (1, 40, 40, 3)
