"""SparkRunner's arguments refused without a cluster: a master nobody answers at, a URL that is
not a Spark master's (the real cluster is in test_spark.py)."""

import socket

import pytest

from engines import common, spark_args


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def test_a_master_nobody_answers_at_is_an_error():
  master = f'spark://localhost:{_free_port()}'
  with pytest.raises(common.EngineError, match='no Spark master answers at'):
    spark_args.spark_args(master)


def test_not_a_spark_master_url():
  with pytest.raises(common.EngineError, match='not a Spark standalone master'):
    spark_args.spark_args('http://localhost:8080')
