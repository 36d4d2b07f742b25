"""trainer/shards.py on real shards: compression, the shuffle buffer, label scans, and damaged
shards read from salvaged copies of their intact records."""

import inspect
import os

import numpy as np
import pytest
import tensorflow as tf

from contracts import image_record
from tests.support import shards as damaged_shards
from tests.trainer.image_shards import random_images, write_image_shards
from trainer import image_input, sequence_input, shards, tabular_input
from trainer.data_spec import ImageSpec


def test_mixed_compression_in_one_split_is_refused(tmp_path):
  plain = write_image_shards(
    str(tmp_path / 'a'), random_images(2, (4, 4, 3)), image_record.ENCODED, '', 1
  )
  gz = write_image_shards(
    str(tmp_path / 'b'), random_images(2, (4, 4, 3)), image_record.ENCODED, 'GZIP', 1
  )
  with pytest.raises(ValueError, match='mixes'):
    shards.serialized_batches(plain + gz, 2, training=False)


def test_shuffle_buffer_is_bounded_by_bytes(tmp_path):
  big = write_image_shards(
    str(tmp_path / 'big'), random_images(3, (200, 200, 3)), image_record.RAW, '', 1
  )
  small = write_image_shards(
    str(tmp_path / 'small'), random_images(3, (4, 4)), image_record.RAW, '', 1
  )
  assert shards.shuffle_buffer_size(big) == shards.SHUFFLE_BUFFER_BYTES // (
    len(next(iter(tf.data.TFRecordDataset(big))).numpy())
  )
  assert shards.shuffle_buffer_size(small) == shards.MAX_SHUFFLE_RECORDS


def test_max_int_label(tmp_path):
  paths = write_image_shards(
    str(tmp_path),
    [(np.zeros((2, 2), np.uint8), n) for n in (4, 9, 2)],
    image_record.ENCODED,
    '',
    shards=2,
  )
  assert shards.max_int_label(paths, 'label') == 9


def _labels_read(files, guard, spec):
  dataset = image_input.image_dataset(files, spec, 64, training=False, guard=guard)
  return [int(label) for _, labels in dataset for label in labels.numpy()]


@pytest.mark.parametrize('where', ['payload', 'length header'])
def test_damaged_record_is_the_only_one_lost(tmp_path, where):
  """The acceptance case: 500 records, the 11th damaged → 499 through the input function."""
  records = damaged_shards.digit_records()
  path = damaged_shards.write_shard(str(tmp_path / 'data-00000-of-00001'), records)
  start = damaged_shards.record_offset(open(path, 'rb').read(), damaged_shards.DAMAGED_INDEX)
  damaged_shards.damage(path, start + (20 if where == 'payload' else 3))
  guard = shards.ShardGuard(str(tmp_path / 'salvage'))
  spec = ImageSpec(16, 16, 1, [str(i) for i in range(10)], image_record.ENCODED, uniform=False)
  labels = _labels_read(path, guard, spec)
  expected = [i % 10 for i in range(damaged_shards.RECORDS) if i != damaged_shards.DAMAGED_INDEX]
  assert labels == expected
  (report,) = guard.reports
  assert (report.good, report.corrupt, report.path) == (damaged_shards.RECORDS - 1, 1, path)
  assert report.salvaged_to.startswith(str(tmp_path / 'salvage'))
  # A second dataset over the same shard reuses the scan.
  assert _labels_read(path, guard, spec) == expected and len(guard.reports) == 1


def test_clean_shards_are_read_in_place(tmp_path):
  paths = write_image_shards(str(tmp_path), random_images(6, (4, 4)), image_record.ENCODED, '')
  guard = shards.ShardGuard(str(tmp_path / 'salvage'))
  assert guard(paths) == paths and all(r.clean and not r.salvaged_to for r in guard.reports)
  assert not os.path.exists(tmp_path / 'salvage')


def test_int_label_counts_are_the_values_present(tmp_path):
  labels = [4, 9, 2, 9, 400]
  paths = write_image_shards(
    str(tmp_path),
    [(np.zeros((2, 2), np.uint8), n) for n in labels],
    image_record.ENCODED,
    '',
    shards=2,
  )
  assert shards.int_label_counts(paths, 'label') == {2: 1, 4: 1, 9: 2, 400: 1}


@pytest.mark.parametrize(
  'builder',
  [image_input.image_dataset, tabular_input.tabular_dataset, sequence_input.sequence_dataset],
)
def test_each_data_kind_s_dataset_builder_takes_the_protocol_s_arguments(builder):
  wanted = list(inspect.signature(shards.DatasetBuilder.__call__).parameters.values())[1:]
  given = list(inspect.signature(builder).parameters.values())
  assert [(p.name, p.default) for p in given[: len(wanted)]] == [
    (p.name, p.default) for p in wanted
  ]
  assert all(p.default is not inspect.Parameter.empty for p in given[len(wanted) :])
