"""The plain Keras script an ML engineer would write instead of the pipeline (bench.edit_loop
times it against `pipeline.py run`).

  .venv/bin/python -m bench.plain_keras DATA_DIR OUT_DIR [--steps N]

DATA_DIR: a class-per-folder image tree, such as the embedded digits `make run` writes
(cli.inputs.default_data.write_digits: 1,797 grayscale 8x8 PNGs). It reads them with
`tf.keras.utils.image_dataset_from_directory` (80 % train, 20 % validation), builds the layers
of the pipeline's default image model (trainer/models/cnn.py at its default hyperparameters:
dropout 0.3, 128 dense units, Adam at 1e-3), trains it for the pipeline's default steps and
batch size (600 steps of 64), evaluates it once on the validation images and exports it with
`model.export(OUT_DIR)` (a SavedModel). No validation of the data, no statistics, no caching,
no comparison with a serving model, no serving check, no lineage.

The last line printed is JSON: the seconds of each phase from this module's first line on
(the interpreter's own start before it is not included) and the validation accuracy.
"""

import time

STARTED = time.monotonic()

import argparse
import json
import math
import os

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')

IMAGE_SIZE = (8, 8)  # the digits' size: no resizing
BATCH_SIZE = 64  # contracts/trainer_options.py
TRAIN_STEPS = 600  # config.py
LEARNING_RATE = 1e-3
DROPOUT, DENSE_UNITS = 0.3, 128  # trainer/models/cnn.py's search_space defaults


def build_model(height: int, width: int, channels: int, classes: int):
  """trainer/models/cnn.py's layers (the input here is float 0..255, as the dataset yields)."""
  import tensorflow as tf

  keras = tf.keras
  inputs = keras.Input(shape=(height, width, channels), name='image')
  x = keras.layers.Rescaling(1.0 / 255)(inputs)
  filters = 32
  x = keras.layers.Conv2D(filters, 3, padding='same', activation='relu')(x)
  for _ in range(max(0, math.ceil(math.log2(max(height, width) / 8)))):
    filters = min(filters * 2, 128)
    x = keras.layers.Conv2D(filters, 3, strides=2, padding='same', activation='relu')(x)
  x = keras.layers.Conv2D(64, 3, padding='same', activation='relu')(x)
  x = keras.layers.Flatten()(x)
  x = keras.layers.Dropout(DROPOUT)(x)
  x = keras.layers.Dense(DENSE_UNITS, activation='relu')(x)
  outputs = keras.layers.Dense(classes, activation='softmax', name='probabilities')(x)
  return keras.Model(inputs, outputs, name='cnn')


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument('data_dir', help='class-per-folder images')
  parser.add_argument('out_dir', help='where the SavedModel goes (model.export)')
  parser.add_argument('--steps', type=int, default=TRAIN_STEPS, help='default: %(default)s')
  args = parser.parse_args(argv)
  phases = {}
  mark = time.monotonic()

  import tensorflow as tf

  phases['import_seconds'] = time.monotonic() - mark
  mark = time.monotonic()
  train, validation = tf.keras.utils.image_dataset_from_directory(
    args.data_dir,
    validation_split=0.2,
    subset='both',
    seed=1,
    image_size=IMAGE_SIZE,
    color_mode='grayscale',
    batch_size=BATCH_SIZE,
  )
  classes = len(train.class_names)
  train = train.cache().repeat().prefetch(tf.data.AUTOTUNE)
  validation = validation.cache().prefetch(tf.data.AUTOTUNE)
  phases['load_seconds'] = time.monotonic() - mark
  mark = time.monotonic()
  model = build_model(*IMAGE_SIZE, 1, classes)
  model.compile(
    optimizer=tf.keras.optimizers.Adam(LEARNING_RATE),
    loss='sparse_categorical_crossentropy',
    metrics=['accuracy'],
  )
  model.fit(train, steps_per_epoch=args.steps, epochs=1, verbose=2)
  phases['fit_seconds'] = time.monotonic() - mark
  mark = time.monotonic()
  _, accuracy = model.evaluate(validation, verbose=0)
  phases['evaluate_seconds'] = time.monotonic() - mark
  mark = time.monotonic()
  model.export(args.out_dir)
  phases['export_seconds'] = time.monotonic() - mark
  result = dict(
    phases,
    seconds=time.monotonic() - STARTED,
    steps=args.steps,
    batch_size=BATCH_SIZE,
    validation_accuracy=float(accuracy),
    exported=os.path.abspath(args.out_dir),
  )
  print(json.dumps(result), flush=True)
  return result


if __name__ == '__main__':
  main()
