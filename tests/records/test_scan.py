"""Damaged TFRecord shards: real files, real corruption, every intact record kept."""

import gzip
import struct

import numpy as np
import pytest
import tensorflow as tf

from records import scan
from tests.support.shards import (
  DAMAGED_INDEX,
  RECORDS,
  damage,
  digit_records,
  read_all,
  record_offset,
  write_shard,
)

RNG = np.random.default_rng(5)


@pytest.fixture(scope='module')
def records():
  return digit_records()


@pytest.fixture
def shard(tmp_path, records):
  return write_shard(str(tmp_path / 'data-00000-of-00001'), records)


def test_flipped_payload_byte_loses_only_that_record(shard, records, tmp_path):
  data = open(shard, 'rb').read()
  start = record_offset(data, DAMAGED_INDEX)
  damage(shard, start + 12 + 5)  # inside the 11th record's data
  stock = sum(1 for _ in tf.data.TFRecordDataset(shard).ignore_errors())
  assert stock == DAMAGED_INDEX  # what stock TensorFlow keeps: the 10 before the damage
  report = scan.check(shard, salvage_to=str(tmp_path / 'salvaged'))
  assert (report.good, report.corrupt, report.truncated_bytes) == (RECORDS - 1, 1, 0)
  assert report.lost_bytes == 16 + len(records[DAMAGED_INDEX])
  assert read_all(report.salvaged_to) == records[:DAMAGED_INDEX] + records[DAMAGED_INDEX + 1 :]


def test_corrupt_length_header_resyncs_at_the_next_record(shard, records, tmp_path):
  data = open(shard, 'rb').read()
  damage(shard, record_offset(data, DAMAGED_INDEX) + 2)  # the length field itself
  report = scan.check(shard, salvage_to=str(tmp_path / 'salvaged'))
  assert (report.good, report.corrupt) == (RECORDS - 1, 1)
  assert report.lost_bytes == 16 + len(records[DAMAGED_INDEX])
  assert read_all(report.salvaged_to) == records[:DAMAGED_INDEX] + records[DAMAGED_INDEX + 1 :]


def test_truncated_shard_keeps_every_complete_record(shard, records, tmp_path):
  data = open(shard, 'rb').read()
  cut = record_offset(data, 300) + 40  # in the middle of record 301
  open(shard, 'wb').write(data[:cut])
  report = scan.check(shard, salvage_to=str(tmp_path / 'salvaged'))
  assert (report.good, report.corrupt, report.truncated_bytes) == (300, 0, 40)
  assert read_all(report.salvaged_to) == records[:300]


def test_random_bytes_and_empty_shards(tmp_path):
  noise = tmp_path / 'noise.tfrecord'
  noise.write_bytes(RNG.integers(0, 256, size=100_000, dtype=np.uint8).tobytes())
  report = scan.check(str(noise))
  assert (report.good, report.corrupt, report.lost_bytes, report.clean) == (0, 1, 100_000, False)
  empty = tmp_path / 'empty.tfrecord'
  empty.write_bytes(b'')
  report = scan.check(str(empty))
  assert (report.good, report.clean) == (0, True)


def test_gzip_salvage_stops_at_the_point_of_damage(tmp_path, records):
  path = write_shard(str(tmp_path / 'data.gz'), records, 'GZIP')
  raw = open(path, 'rb').read()
  damage(path, len(raw) // 2)  # the middle of the compressed stream
  report = scan.check(path, salvage_to=str(tmp_path / 'out' / 'data.gz'))
  assert report.gzip and report.gzip_damaged and not report.clean
  assert 0 < report.good < RECORDS  # what decompressed before zlib noticed, nothing after it
  salvaged = read_all(report.salvaged_to)
  positions = [records.index(r) for r in salvaged]  # each one an original record…
  assert positions == sorted(set(positions)) and len(salvaged) == report.good  # …in order
  assert positions[-1] < RECORDS - 1


def test_truncated_gzip_keeps_the_records_before_the_cut(tmp_path, records):
  path = write_shard(str(tmp_path / 'data.gz'), records, 'GZIP')
  raw = open(path, 'rb').read()
  open(path, 'wb').write(raw[: len(raw) * 3 // 4])
  report = scan.check(path)
  assert report.gzip_damaged and 0 < report.good < RECORDS
  clean = scan.check(write_shard(str(tmp_path / 'clean.gz'), records, 'GZIP'))
  assert clean.clean and clean.good == RECORDS
  # A multi-member GZIP file (concatenated streams) is one shard, read to the end.
  both = tmp_path / 'two.gz'
  both.write_bytes(
    gzip.compress(b''.join(_framed(records[:3]))) + gzip.compress(b''.join(_framed(records[3:5])))
  )
  assert scan.check(str(both)).good == 5


def _framed(serialized_records):
  for data in serialized_records:
    length = struct.pack('<Q', len(data))
    yield (
      length
      + struct.pack('<I', scan.masked_crc(length))
      + data
      + struct.pack('<I', scan.masked_crc(data))
    )
