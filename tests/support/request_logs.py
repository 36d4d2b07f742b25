"""Request log files named as `pipeline.py predict --log` names them (contracts/request_log.py)."""

from contracts import request_log


def file_name(index: int, count: int) -> str:
  """prediction_log-<index>-of-<count>.tfrecord: what request_log.files finds in a folder."""
  return f'{request_log.FILE_PREFIX}-{index:05d}-of-{count:05d}{request_log.FILE_SUFFIX}'
