"""Images as the features that carry their skew: height, width, channels, brightness (mean pixel
/ 255), contrast (pixel standard deviation / 255) and, where training stored encoded bytes, the
format. One function computes them for the training records and for the serving images, so both
sides are measured the same way; TFDV statistics and the skew comparators then apply to them as
to any tabular column (monitoring/distances.py).

Serving images: a folder of image files (as `pipeline.py run` takes them, any depth), image
records (contracts/image_record.py layout: TFRecords, serving_default requests) or
predict_image_bytes requests in PredictionLog files."""

import glob
import io
import os
from typing import Iterable, List, Optional

import numpy as np

from contracts import image_record, request_log, serving
from contracts.errors import UserError

HEIGHT, WIDTH, CHANNELS = 'height', 'width', 'channels'
BRIGHTNESS, CONTRAST, FORMAT = 'brightness', 'contrast', 'format'
EXTENSIONS = ('.png', '.jpg', '.jpeg', '.bmp', '.gif', '.tif', '.tiff', '.webp')
TRAINING_SAMPLE = 5000  # training records measured (the first ones: shards mix classes)
_CHANNELS = {'L': 1, 'LA': 1, 'RGB': 3, 'RGBA': 3, 'P': 3, 'CMYK': 3, 'I': 1, 'I;16': 1, '1': 1}


def schema(with_format: bool):
  """The schema of the image features."""
  from tensorflow_metadata.proto.v0 import schema_pb2

  found = schema_pb2.Schema()
  for name, kind in (
    (HEIGHT, schema_pb2.INT),
    (WIDTH, schema_pb2.INT),
    (CHANNELS, schema_pb2.INT),
    (BRIGHTNESS, schema_pb2.FLOAT),
    (CONTRAST, schema_pb2.FLOAT),
  ) + (((FORMAT, schema_pb2.BYTES),) if with_format else ()):
    found.feature.add(name=name, type=kind)
  return found


def _example(pixels: np.ndarray, fmt: Optional[str]) -> bytes:
  import tensorflow as tf

  pixels = pixels.astype(np.float64) / 255.0
  height, width = pixels.shape[:2]
  channels = 1 if pixels.ndim == 2 else pixels.shape[2]
  ints = {HEIGHT: height, WIDTH: width, CHANNELS: channels}
  floats = {BRIGHTNESS: float(pixels.mean()), CONTRAST: float(pixels.std())}
  feature = {k: tf.train.Feature(int64_list=tf.train.Int64List(value=[v])) for k, v in ints.items()}
  feature.update(
    {k: tf.train.Feature(float_list=tf.train.FloatList(value=[v])) for k, v in floats.items()}
  )
  if fmt:
    feature[FORMAT] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[fmt.encode()]))
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def from_bytes(data: bytes, where: str) -> bytes:
  """The image features of an encoded image (alpha left out, as ImageExampleGen stores it)."""
  import PIL.Image

  try:
    with PIL.Image.open(io.BytesIO(data)) as image:
      fmt = image.format or ''
      mode = image.mode
      channels = _CHANNELS.get(mode, 3)
      pixels = np.asarray(image.convert('L' if channels == 1 else 'RGB'))
  except (OSError, ValueError) as e:
    raise UserError(f'{where}: not an image ({e})') from None
  return _example(pixels, fmt)


def from_record(record: bytes, with_format: bool) -> bytes:
  """The image features of an image record (raw pixels or encoded bytes)."""
  import tensorflow as tf

  feature = tf.train.Example.FromString(record).features.feature
  payload = feature[image_record.IMAGE_KEY].bytes_list.value[0]
  height, width, channels = (
    feature[k].int64_list.value[0]
    for k in (image_record.HEIGHT_KEY, image_record.WIDTH_KEY, image_record.CHANNELS_KEY)
  )
  if len(payload) == height * width * channels:  # raw pixels, row-major H×W×C
    pixels = np.frombuffer(payload, np.uint8).reshape(height, width, channels)
    return _example(pixels[..., 0] if channels == 1 else pixels, 'RAW' if with_format else None)
  example = from_bytes(payload, 'a training record')
  return example if with_format else _strip_format(example)


def _strip_format(example: bytes) -> bytes:
  import tensorflow as tf

  parsed = tf.train.Example.FromString(example)
  del parsed.features.feature[FORMAT]
  return parsed.SerializeToString()


def _gzip(path: str) -> str:
  with open(path, 'rb') as f:
    return 'GZIP' if f.read(2) == b'\x1f\x8b' else ''


def read_records(paths: Iterable[str], limit: Optional[int] = None) -> List[bytes]:
  """The serialized records of TFRecord files (GZIP or not), the first `limit` when given."""
  import tensorflow as tf

  found = []
  for path in paths:
    for record in tf.data.TFRecordDataset(path, compression_type=_gzip(path)).as_numpy_iterator():
      found.append(bytes(record))
      if limit and len(found) >= limit:
        return found
  return found


def training_encoded(examples_uri: str) -> bool:
  """Whether ImageExampleGen stored encoded bytes (then the format is compared too)."""
  import json

  from contracts import artifacts

  with open(os.path.join(examples_uri, artifacts.IMAGE_META_FILE)) as f:
    return json.load(f).get('encoding') == image_record.ENCODED


def training_examples(examples_uri: str, with_format: bool) -> List[bytes]:
  shards = sorted(glob.glob(os.path.join(glob.escape(examples_uri), 'Split-train', '*')))
  return [from_record(r, with_format) for r in read_records(shards, TRAINING_SAMPLE)]


def serving_examples(path: str, with_format: bool) -> List[bytes]:
  """The image features of every serving image in `path`."""
  from monitoring import serving_data

  files = serving_data.files(path)
  images = [f for f in files if f.lower().endswith(EXTENSIONS)]
  found = []
  if images:
    for name in images:
      with open(name, 'rb') as f:
        found.append(from_bytes(f.read(), name))
  else:
    kind = serving_data.kind_of(files)
    if kind == serving_data.CSV:
      raise UserError(f'--serving-data {path}: CSV, but the serving model takes images')
    if kind == serving_data.PREDICTION_LOG:
      for request in request_log.read(files):
        if request.signature == serving.IMAGE_BYTES:
          for data in np.asarray(request.inputs[serving.IMAGE_BYTES_INPUT]).ravel():
            found.append(from_bytes(bytes(data), path))
        elif request.signature == serving.SERVING_DEFAULT:
          for record in np.asarray(request.inputs[serving.EXAMPLES_INPUT]).ravel():
            found.append(from_record(bytes(record), True))
        else:
          raise UserError(f'--serving-data {path}: {request.signature} requests to an image model')
    else:
      found = [from_record(r, True) for r in read_records(files)]
    if not with_format:
      found = [_strip_format(e) for e in found]
  if not found:
    raise UserError(f'--serving-data {path}: no images')
  return found
