"""The benchmark's data sets, written with the project's own ExampleGen record layout.

- jpeg:    224x224 JPEGs cut from two real photos (scikit-learn's china.jpg and flower.jpg:
           random square crops of 160–427 px, rescaled, some mirrored), kept encoded;
- raw:     the same images as raw uint8 pixels (150 KB per record);
- photos:  camera-size 1600x1200 JPEGs (~440 KB) cut from the same two photos (random 4:3 crops
           scaled up, with mild sensor-like noise so that they compress like photos), as image
           files in class folders (for ExampleGen) and as full-size shards;
- tabular: the Chicago taxi CSV shipped in the tfx wheel (15k rows, 17 columns), as tf.Examples
           the way CsvExampleGen types them (int, float or bytes per column), repeated as needed.
"""

import csv
import dataclasses
import io
import os
from typing import List, Optional, Union

import numpy as np
import PIL.Image
import sklearn.datasets
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
import tfx

from components.image_example_gen import encode
from contracts import image_record
from records import image_codec
from trainer.data_spec import ImageSpec, TabularSpec

SIDE = 224
PHOTO_SIZE = (1600, 1200)  # width, height: a 2-megapixel camera photo
DISTINCT_PHOTOS = 40  # then cycled (decode cost does not depend on which photo)
SHARDS = 4
DISTINCT_IMAGES = 400  # cut this many images, then cycle through them
PHOTOS = os.path.join(os.path.dirname(sklearn.datasets.__file__), 'images')
TAXI_CSV = os.path.join(
  os.path.dirname(tfx.__file__), 'examples', 'chicago_taxi_pipeline', 'data', 'simple', 'data.csv'
)
TAXI_LABEL = 'tips'


@dataclasses.dataclass
class DataSet:
  name: str
  files: List[str]
  records: int
  megabytes: float
  spec: Union[ImageSpec, TabularSpec]
  schema: schema_pb2.Schema  # for TFX's stock reader
  payloads: Optional[np.ndarray] = None  # jpeg: the encoded images, for the decode ceiling

  @property
  def bytes_per_record(self) -> float:
    return self.megabytes * 1e6 / self.records


def _photo_crops(count: int, seed: int = 0) -> List[bytes]:
  rng = np.random.default_rng(seed)
  photos = [
    PIL.Image.open(os.path.join(PHOTOS, name)).convert('RGB')
    for name in ('china.jpg', 'flower.jpg')
  ]
  out = []
  for i in range(count):
    photo = photos[i % len(photos)]
    side = int(rng.integers(160, min(photo.size) + 1))
    left = int(rng.integers(0, photo.size[0] - side + 1))
    top = int(rng.integers(0, photo.size[1] - side + 1))
    image = photo.crop((left, top, left + side, top + side)).resize(
      (SIDE, SIDE), PIL.Image.BILINEAR
    )
    if rng.random() < 0.5:
      image = image.transpose(PIL.Image.FLIP_LEFT_RIGHT)
    buffer = io.BytesIO()
    image.save(buffer, format='JPEG', quality=90)
    out.append(buffer.getvalue())
  return out


def _camera_photos(count: int, seed: int = 0) -> List[bytes]:
  rng = np.random.default_rng(seed)
  sources = [
    PIL.Image.open(os.path.join(PHOTOS, name)).convert('RGB')
    for name in ('china.jpg', 'flower.jpg')
  ]
  width, height = PHOTO_SIZE
  out = []
  for i in range(count):
    photo = sources[i % len(sources)]
    crop_h = int(rng.integers(photo.size[1] * 2 // 3, photo.size[1] + 1))
    crop_w = min(photo.size[0], crop_h * width // height)
    left = int(rng.integers(0, photo.size[0] - crop_w + 1))
    top = int(rng.integers(0, photo.size[1] - crop_h + 1))
    image = photo.crop((left, top, left + crop_w, top + crop_h)).resize(
      PHOTO_SIZE, PIL.Image.BICUBIC
    )
    noisy = np.asarray(image, np.int16) + rng.normal(0, 3, (height, width, 3)).astype(np.int16)
    buffer = io.BytesIO()
    PIL.Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(buffer, 'JPEG', quality=90)
    out.append(buffer.getvalue())
  return out


def _write(folder: str, examples) -> List[str]:
  os.makedirs(folder, exist_ok=True)
  paths = [os.path.join(folder, f'data-{i:05d}-of-{SHARDS:05d}') for i in range(SHARDS)]
  writers = [tf.io.TFRecordWriter(p) for p in paths]
  for i, serialized in enumerate(examples):
    writers[i % SHARDS].write(serialized)
  for writer in writers:
    writer.close()
  return paths


def _megabytes(paths: List[str]) -> float:
  return sum(os.path.getsize(p) for p in paths) / 1e6


def _image_schema() -> schema_pb2.Schema:
  schema = schema_pb2.Schema()
  for name, kind in (
    (image_record.IMAGE_KEY, schema_pb2.BYTES),
    (image_record.LABEL_KEY, schema_pb2.INT),
  ):
    feature = schema.feature.add(name=name, type=kind)
    feature.shape.dim.add(size=1)
    feature.presence.min_fraction = 1.0
  return schema


def images(folder: str, count: int, encoding: str) -> DataSet:
  jpegs = _photo_crops(min(count, DISTINCT_IMAGES))
  encoded = [encode.encode_image(data, encoding) for data in jpegs]

  def examples():
    for i in range(count):
      yield image_codec.make_example(
        encoded[i % len(encoded)], i % 10, str(i % 10), f'{i}.jpg'
      ).SerializeToString()

  paths = _write(os.path.join(folder, encoding), examples())
  name = 'jpeg' if encoding == image_record.ENCODED else 'raw'
  spec = ImageSpec(SIDE, SIDE, 3, [str(i) for i in range(10)], encoding, uniform=True)
  payloads = np.array(jpegs, dtype=object) if encoding == image_record.ENCODED else None
  return DataSet(name, paths, count, _megabytes(paths), spec, _image_schema(), payloads)


def _photo_spec(classes: int) -> ImageSpec:
  """Photos of any stored size, read for a SIDE x SIDE model (resized by the Trainer)."""
  return ImageSpec(
    SIDE, SIDE, 3, [f'class{i}' for i in range(classes)], image_record.ENCODED, False
  )


def photos(folder: str, count: int, classes: int = 10):
  """(full-size shards as a DataSet, the class-folder tree ExampleGen reads)."""
  jpegs = _camera_photos(min(count, DISTINCT_PHOTOS))
  tree = os.path.join(folder, 'photo_files')
  width, height = PHOTO_SIZE

  def examples():
    for i in range(count):
      payload = jpegs[i % len(jpegs)]
      relpath = f'class{i % classes}/{i:05d}.jpg'
      os.makedirs(os.path.join(tree, f'class{i % classes}'), exist_ok=True)
      with open(os.path.join(tree, relpath), 'wb') as f:
        f.write(payload)
      encoded = image_record.EncodedImage(payload, height, width, 3)
      yield image_codec.make_example(
        encoded, i % classes, f'class{i % classes}', relpath
      ).SerializeToString()

  paths = _write(os.path.join(folder, 'photos'), examples())
  spec = _photo_spec(classes)
  payloads = np.array(jpegs, dtype=object)
  data = DataSet('photos', paths, count, _megabytes(paths), spec, _image_schema(), payloads)
  return data, tree


def prepared(name: str, files: List[str], records: int, classes: int = 10) -> DataSet:
  """Shards ExampleGen wrote from photos(): smaller JPEGs, resized to SIDE by the Trainer."""
  spec = _photo_spec(classes)
  return DataSet(name, files, records, _megabytes(files), spec, _image_schema())


def _column_kinds(rows: List[dict]) -> dict:
  kinds = {}
  for column in rows[0]:
    values = [row[column] for row in rows if row[column] != '']
    for kind, convert in (('int', int), ('float', float)):
      try:
        [convert(v) for v in values]
        kinds[column] = kind
        break
      except ValueError:
        continue
    else:
      kinds[column] = 'bytes'
  return kinds


def tabular(folder: str, copies: int) -> DataSet:
  with open(TAXI_CSV) as f:
    rows = list(csv.DictReader(f))
  kinds = _column_kinds(rows)

  def example(row) -> bytes:
    feature = {}
    for column, kind in kinds.items():
      value = row[column]
      if kind == 'int':
        feature[column] = tf.train.Feature(
          int64_list=tf.train.Int64List(value=[int(value)] if value else [])
        )
      elif kind == 'float':
        feature[column] = tf.train.Feature(
          float_list=tf.train.FloatList(value=[float(value)] if value else [])
        )
      else:
        feature[column] = tf.train.Feature(
          bytes_list=tf.train.BytesList(value=[value.encode()] if value else [])
        )
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

  serialized = [example(row) for row in rows]
  paths = _write(os.path.join(folder, 'tabular'), (s for _ in range(copies) for s in serialized))
  schema = schema_pb2.Schema()
  types = {'int': schema_pb2.INT, 'float': schema_pb2.FLOAT, 'bytes': schema_pb2.BYTES}
  for column, kind in kinds.items():
    schema.feature.add(name=column, type=types[kind])
  numeric = [c for c, k in kinds.items() if k in ('int', 'float') and c != TAXI_LABEL]
  spec = TabularSpec(
    label_key=TAXI_LABEL,
    label_threshold=0.0,
    num_classes=2,
    numeric=numeric,
    categorical=[c for c, k in kinds.items() if k == 'bytes'],
    integer=[c for c, k in kinds.items() if k == 'int' and c != TAXI_LABEL],
  )
  return DataSet('tabular', paths, len(rows) * copies, _megabytes(paths), spec, schema)
