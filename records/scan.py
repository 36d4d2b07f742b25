"""Finds every intact record in a TFRecord shard, whatever happened to the rest of it.

A record is `length (uint64 LE) | masked CRC32C(length) | data | masked CRC32C(data)`.
- Data CRC wrong, length CRC right: that record is skipped and the scan goes on with the next
  one (its length can be trusted).
- Length CRC wrong: the header is garbage, so the scan resyncs to the first later offset where a
  header's length CRC *and* the data CRC of the record it announces both check out; the gap is one
  damaged region, counted as one corrupt record plus its lost bytes.
- The file ends inside a record: every complete record before the cut is kept; the incomplete
  rest is reported as truncated tail bytes.
- GZIP shards are one compressed stream with no sync points: a damaged stream cannot be resumed.
  Salvage keeps the records that decompressed, CRC-intact, before zlib noticed the damage (a
  flipped bit can garble a few records first: those fail their CRC and are skipped) and nothing
  after it.
Stock `TFRecordDataset(...).ignore_errors()` instead ends a shard at its first bad record.
"""

from concurrent import futures
import dataclasses
import gzip
import multiprocessing
import os
import struct
from typing import BinaryIO, List, Optional, Tuple
import zlib

import google_crc32c
import numpy as np

from utils import atomic

HEADER, FOOTER = 12, 4
_LENGTH = struct.Struct('<QI')
_CRC = struct.Struct('<I')
_RESYNC_WINDOW = 1 << 20


def masked_crc(data) -> int:
  """TFRecord's masked CRC32C (google_crc32c takes bytes, not memoryview slices)."""
  crc = google_crc32c.value(bytes(data))
  return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@dataclasses.dataclass
class ShardReport:
  """What a scan found in one shard (sizes of GZIP shards are of the decompressed stream)."""

  path: str
  gzip: bool = False
  good: int = 0
  corrupt: int = 0  # skipped records, a resync gap counting as one
  lost_bytes: int = 0  # bytes of skipped records and resync gaps
  truncated_bytes: int = 0  # an incomplete record at the end
  gzip_damaged: bool = False  # the compressed stream is broken: nothing after the damage is read
  salvaged_to: str = ''  # where the intact records were written, if they were
  spans: List[Tuple[int, int]] = dataclasses.field(default_factory=list, repr=False)  # intact

  @property
  def clean(self) -> bool:
    return not (self.corrupt or self.truncated_bytes or self.gzip_damaged)

  def summary(self) -> dict:
    fields = dataclasses.asdict(self)
    del fields['spans']
    return fields


def _resync(data: memoryview, start: int) -> int:
  """First offset ≥ start where a whole record checks out, or len(data)."""
  size = len(data)
  for window in range(start, size - HEADER - FOOTER + 1, _RESYNC_WINDOW):
    stop = min(window + _RESYNC_WINDOW, size - HEADER - FOOTER + 1)
    # Every offset's 8-byte little-endian length at once; only plausible ones get CRC checks.
    lengths = np.lib.stride_tricks.as_strided(
      np.frombuffer(data, np.uint8, count=stop - window + 7, offset=window).view(np.uint8),
      shape=(stop - window, 8),
      strides=(1, 1),
    ) @ (256 ** np.arange(8, dtype=np.uint64))
    room = size - HEADER - FOOTER - np.arange(window, stop, dtype=np.uint64)
    for offset in (np.flatnonzero(lengths <= room) + window).tolist():
      length, length_crc = _LENGTH.unpack_from(data, offset)
      if masked_crc(data[offset : offset + 8]) != length_crc:
        continue
      end = offset + HEADER + length
      if masked_crc(data[offset + HEADER : end]) == _CRC.unpack_from(data, end)[0]:
        return offset
  return size


def scan_records(data, report: ShardReport, offset: int = 0) -> ShardReport:
  """Walks the records of an uncompressed TFRecord buffer; spans are offset by `offset`."""
  data = memoryview(data)
  size, position = len(data), 0
  while position < size:
    if size - position < HEADER:
      report.truncated_bytes += size - position
      break
    length, length_crc = _LENGTH.unpack_from(data, position)
    if masked_crc(data[position : position + 8]) != length_crc:
      resumed = _resync(data, position + 1)
      report.corrupt += 1
      report.lost_bytes += resumed - position
      position = resumed
      continue
    end = position + HEADER + length + FOOTER
    if end > size:
      report.truncated_bytes += size - position
      break
    if (
      masked_crc(data[position + HEADER : end - FOOTER]) == _CRC.unpack_from(data, end - FOOTER)[0]
    ):
      report.good += 1
      report.spans.append((offset + position, offset + end))
    else:
      report.corrupt += 1
      report.lost_bytes += end - position
    position = end
  return report


def scan_stream(f: BinaryIO, report: ShardReport) -> ShardReport:
  """Reads records one by one (the fast path: ~1 µs per record plus its CRC); from the first
  bad length header on, the rest of the file is read into memory for scan_records' resync."""
  position = intact_from = 0  # [intact_from, position) is a run of intact records
  read, unpack, crc_of, data_crc = f.read, _LENGTH.unpack, google_crc32c.value, _CRC.unpack_from
  while True:
    header = read(HEADER)
    if len(header) < HEADER:
      report.truncated_bytes += len(header)
      break
    length, length_crc = unpack(header)
    crc = crc_of(header[:8])
    if (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF != length_crc:
      _add_span(report, intact_from, position)
      return scan_records(header + read(), report, offset=position)
    body = read(length + FOOTER)
    if len(body) < length + FOOTER:
      report.truncated_bytes += HEADER + len(body)
      break
    crc = crc_of(body[:length])
    end = position + HEADER + length + FOOTER
    if (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF == data_crc(body, length)[0]:
      report.good += 1
    else:
      _add_span(report, intact_from, position)
      intact_from = end
      report.corrupt += 1
      report.lost_bytes += end - position
    position = end
  _add_span(report, intact_from, position)
  return report


def _add_span(report: ShardReport, start: int, end: int) -> None:
  if end > start:
    report.spans.append((start, end))


def _gunzip(raw: bytes) -> Tuple[bytes, bool]:
  """Decompresses (multi-member) GZIP; on damage returns what came before it and True."""
  out, damaged, chunk = [], False, 1 << 16
  while raw:
    stream = zlib.decompressobj(wbits=31)
    try:
      for start in range(0, len(raw), chunk):
        out.append(stream.decompress(raw[start : start + chunk]))
        if stream.eof:
          break
      out.append(stream.flush())
    except zlib.error:
      return b''.join(out), True
    if not stream.eof:
      return b''.join(out), True  # cut inside the stream
    raw = stream.unused_data
  return b''.join(out), damaged


def _open(path: str) -> BinaryIO:
  """Local paths with open(); gs://, s3://, … through tf.io.gfile."""
  if '://' in path:
    import tensorflow as tf

    return tf.io.gfile.GFile(path, 'rb')
  return open(path, 'rb', buffering=1 << 20)


def scan(path: str) -> Tuple[ShardReport, Optional[bytes]]:
  """Scans one shard; returns the report and, for GZIP, the decompressed bytes spans index."""
  with _open(path) as f:
    if not path.endswith('.gz'):
      return scan_stream(f, ShardReport(path=path)), None
    data, damaged = _gunzip(f.read())
  return scan_records(data, ShardReport(path=path, gzip=True, gzip_damaged=damaged)), data


def _intact_records(report: ShardReport, data: Optional[bytes]) -> bytes:
  if data is not None:
    view = memoryview(data)
    return b''.join(view[start:end] for start, end in report.spans)
  pieces = []
  with _open(report.path) as f:
    for start, end in report.spans:
      f.seek(start)
      pieces.append(f.read(end - start))
  return b''.join(pieces)


def write_salvaged(report: ShardReport, data: Optional[bytes], destination: str) -> str:
  """Writes the intact records of a scanned shard (same compression), atomically."""
  payload = _intact_records(report, data)
  if report.gzip:
    payload = gzip.compress(payload, compresslevel=6, mtime=0) if payload else b''
  return atomic.write(destination, payload)


def check(path: str, salvage_to: str = '', salvage_clean: bool = False) -> ShardReport:
  """Scans one shard; writes its intact records to `salvage_to` if damaged (or always)."""
  report, data = scan(path)
  if salvage_to and (salvage_clean or not report.clean):
    report.salvaged_to = write_salvaged(report, data, salvage_to)
  report.spans = []  # offsets into data that is gone; keeps reports small across processes
  return report


def check_all(
  paths: List[str],
  salvage_dir: str = '',
  salvage_clean: bool = False,
  workers: int = 0,
  processes: bool = False,
) -> List[ShardReport]:
  """check() for every shard in parallel, salvaged copies keeping paths relative to the
  shards' common folder. processes=True for CPU-bound runs without TensorFlow loaded."""
  if not paths:
    return []
  common = os.path.commonpath([os.path.dirname(p) for p in paths])
  targets = [
    os.path.join(salvage_dir, os.path.relpath(p, common)) if salvage_dir else '' for p in paths
  ]
  workers = workers or min(len(paths), os.cpu_count() or 1)
  if workers == 1:
    return [check(p, t, salvage_clean) for p, t in zip(paths, targets)]
  if processes:  # spawn: the caller may hold threads (TensorFlow) that fork would copy mid-lock
    pool = futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context('spawn'))
  else:
    pool = futures.ThreadPoolExecutor(workers)
  with pool as executor:
    return list(executor.map(check, paths, targets, [salvage_clean] * len(paths)))


def totals(reports: List[ShardReport]) -> dict:
  """Sums over shards, plus the share of records lost (a resync gap counts as one record)."""
  sums = {
    key: sum(getattr(r, key) for r in reports)
    for key in ('good', 'corrupt', 'lost_bytes', 'truncated_bytes')
  }
  sums['shards'] = len(reports)
  sums['damaged_shards'] = sum(not r.clean for r in reports)
  lost = sums['corrupt'] + sum(bool(r.truncated_bytes or r.gzip_damaged) for r in reports)
  sums['lost_fraction'] = lost / max(1, lost + sums['good'])
  return sums
