"""The custom ExampleGens' spec records what their executors write: the eval_percent split and
the real compression (honest parameters in the compiled spec and in ML Metadata)."""

import json

import pytest
from tfx.proto import example_gen_pb2

from components.image_example_gen.component import ImageExampleGen
from components.text_example_gen.component import TextExampleGen


def _split(properties) -> dict:
  splits = json.loads(properties['output_config'])['split_config']['splits']
  return {split['name']: split['hash_buckets'] for split in splits}


@pytest.mark.parametrize(
  'compression,file_format',
  [
    ('none', example_gen_pb2.FILE_FORMAT_UNSPECIFIED),
    ('gzip', example_gen_pb2.FORMAT_TFRECORDS_GZIP),
  ],
)
def test_image_example_gen_records_its_split_and_compression(compression, file_format):
  gen = ImageExampleGen(input_base='/data', eval_percent=30, compression=compression)
  assert _split(gen.exec_properties) == {'train': 70, 'eval': 30}
  assert gen.exec_properties['output_file_format'] == file_format


def test_text_example_gen_records_its_split_and_plain_records():
  gen = TextExampleGen(
    input_base='/data', pattern='*.csv', label_column='label', text_column='text', eval_percent=5
  )
  assert _split(gen.exec_properties) == {'train': 95, 'eval': 5}
  assert gen.exec_properties['output_file_format'] == example_gen_pb2.FILE_FORMAT_UNSPECIFIED
