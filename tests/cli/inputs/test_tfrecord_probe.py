"""cli/inputs/tfrecord_probe: tf.Examples or SequenceExamples, told from the first record."""

import os

from cli.inputs import data_layout, tfrecord_probe
import config as cfg
from tests.support.tfx_data import SEQUENCE_TESTDATA


def test_split_folders_of_gzip_sequence_examples_are_recognised():
  source = data_layout.resolve_data(SEQUENCE_TESTDATA)
  assert source.kind == cfg.TFRECORDS
  assert source.splits == (('eval', 'Split-eval/*'), ('train', 'Split-train/*'))
  assert tfrecord_probe.holds_sequence_examples(data_layout.sample_file(source))
  single = data_layout.resolve_data(
    os.path.join(SEQUENCE_TESTDATA, 'Split-eval', 'data_tfrecord_eval.gz')
  )
  assert single.kind == cfg.TFRECORDS and single.pattern == 'data_tfrecord_eval.gz'


def test_tf_examples_are_not_sequence_examples(tmp_path):
  import tensorflow as tf

  path = str(tmp_path / 'x.tfrecord')
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(
      tf.train.Example(
        features=tf.train.Features(
          feature={'x': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}
        )
      ).SerializeToString()
    )
  assert not tfrecord_probe.holds_sequence_examples(path)
