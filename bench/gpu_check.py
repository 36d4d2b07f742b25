"""The GPU check: how much of a training step's wall time the accelerator is busy when the
project's input function feeds it, against the seed article 000's recipe.

  make gpu-check ARGS="--json OUT"   # CUDA libraries (requirements-gpu.lock) + the check
  .venv/bin/python -m bench.gpu_check [--images N] [--steps N] [--json OUT]
  .venv/bin/python -m bench.gpu_check --smoke [--json OUT]     # tiny model, any device, ~20 s

Data: N realistic 224x224 JPEGs (bench/example_gen.py write_images: random crops of two real
photos, ~15 KB, 10 class folders) turned into TFRecord shards by the project's ImageExampleGen
executor (Beam in this process, ~8 shards); only Split-train is read, repeated forever.

Model: keras.applications.ResNet50 (random weights, 224x224x3, 10 classes, logits), Adam, sparse
categorical cross-entropy; mixed_float16 and XLA on a GPU (what trainer/distribution.py picks for
one GPU), float32 without XLA on a CPU. Each pipeline trains its own copy, fed what it yields:
  project   trainer.input_pipeline.image_dataset as the Trainer calls it (ShardGuard included):
            uint8 images; the model's first layer casts and normalises them to [-1, 1];
  seed_000  bench.recipes.seed_000 as is: per-record parse + decode + resize + float normalise,
            shuffle(10,000), batch, prefetch: float32 images in [-1, 1], fed straight in.
Both use batch 64 (recipes.BATCH). --smoke swaps ResNet-50 for a three-layer CNN, makes the
data and the step counts tiny and seed_000's shuffle buffer 500 (its 10,000 decoded float images
take ~6 GB): it proves the whole path, its figures mean nothing.

Measurement, per pipeline, one tf.function training step (Keras's own Model.train_step):
  pipeline     warm-up steps (tracing, XLA compilation, shuffle buffer), then `--steps` timed
               steps, each pulling its batch from the dataset's iterator;
  device-only  one batch of that pipeline put on the device, then warm-up and `--steps` timed
               steps on that same batch: the step time with no input pipeline at all.
The clock stops after the last step's loss is fetched to the host (steps run in order, so every
step has finished). Reported: examples/s (batch / step time) of both, and the share of wall time
the device was busy = device-only step time / pipeline step time (1.0: the input pipeline keeps
up; the JSON keeps the raw ratio, the table caps it at 1.0).

Without a GPU the real check refuses to run (exit 2) unless --allow-cpu is given.
"""

import argparse
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

import keras
import tensorflow as tf

from bench import example_gen, figures, input_data, recipes
from contracts import image_record
from trainer import input_pipeline
from trainer.data_spec import ImageSpec

SIDE = 224
CLASSES = 10
SHARDS = 8  # ExampleGen's --shard-size-mb is set from the images' size to give about this many
PIPELINES = ('project', 'seed_000')
# FULL: about a minute of training steps on one H200, the whole run a few minutes
FULL = dict(images=2_000, steps=200, warmup=20, seed_shuffle=10_000)
SMOKE = dict(images=60, steps=5, warmup=2, seed_shuffle=500)


def _fail(message: str) -> None:
  print(f'gpu_check: {message}', file=sys.stderr)
  raise SystemExit(2)


def build_model(input_dtype: str, smoke: bool) -> keras.Model:
  """ResNet-50 (smoke: a tiny CNN) behind the input's normalisation: uint8 → [-1, 1]."""
  inputs = keras.Input(shape=(SIDE, SIDE, 3), dtype=input_dtype, name='image')
  x = inputs
  if input_dtype == 'uint8':
    x = keras.layers.Rescaling(1.0 / 127.5, offset=-1.0)(x)  # casts, like the seed's float math
  if smoke:
    x = keras.layers.Conv2D(8, 3, strides=4, activation='relu')(x)
    x = keras.layers.Conv2D(16, 3, strides=4, activation='relu')(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(CLASSES)(x)
  else:
    outputs = keras.applications.ResNet50(
      weights=None, input_shape=(SIDE, SIDE, 3), classes=CLASSES, classifier_activation=None
    )(x)
  model = keras.Model(inputs, outputs)
  model.compile(
    optimizer=keras.optimizers.Adam(1e-3),  # a LossScaleOptimizer under mixed_float16
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
  )
  model.optimizer.build(model.trainable_variables)  # its variables exist before tracing
  return model


def seconds_per_step(step, next_batch, steps: int) -> float:
  """Wall seconds per step over `steps` steps, the last one finished (its loss fetched)."""
  loss = None
  started = time.perf_counter()
  for _ in range(steps):
    loss = step(*next_batch())
  loss.numpy()
  return (time.perf_counter() - started) / steps


def measure(name: str, dataset, settings: dict, device: str, xla: bool) -> dict:
  input_dtype = 'uint8' if name == 'project' else 'float32'
  model = build_model(input_dtype, settings['smoke'])
  step = tf.function(
    lambda images, labels: model.train_step((images, labels))['loss'], jit_compile=xla
  )
  iterator = iter(dataset)
  spec = dataset.element_spec[0]
  if spec.dtype.name != input_dtype or tuple(spec.shape[1:]) != (SIDE, SIDE, 3):
    raise RuntimeError(f'{name} yields {spec}, expected {input_dtype} [batch, {SIDE}, {SIDE}, 3]')
  print(
    f'  {name}: warm-up ({settings["warmup"]} steps: tracing, compilation, buffers)', flush=True
  )
  seconds_per_step(step, lambda: next(iterator), settings['warmup'])
  pipeline_s = seconds_per_step(step, lambda: next(iterator), settings['steps'])
  with tf.device(device):
    resident = tuple(tf.identity(t) for t in next(iterator))
  seconds_per_step(step, lambda: resident, max(2, settings['warmup'] // 4))
  device_s = seconds_per_step(step, lambda: resident, settings['steps'])
  batch = int(resident[0].shape[0])
  result = {
    'input_dtype': input_dtype,
    'examples_per_s': batch / pipeline_s,
    'step_ms': pipeline_s * 1e3,
    'device_only_examples_per_s': batch / device_s,
    'device_only_step_ms': device_s * 1e3,
    'busy_share': device_s / pipeline_s,
  }
  print(
    f'  {name}: {result["examples_per_s"]:,.0f} examples/s, {result["step_ms"]:.1f} ms/step; '
    f'device-only {result["device_only_step_ms"]:.1f} ms/step; busy {result["busy_share"]:.2f}',
    flush=True,
  )
  return result


def table(report: dict) -> list:
  busy = 'GPU busy share' if report['device_kind'] == 'gpu' else 'device busy share'
  lines = [
    f'device: {report["device"]}; model {report["model"]}; batch {report["batch"]}; '
    f'{report["steps"]} timed steps; {report["mixed_precision"]}, XLA {report["xla"]}',
    f'| pipeline | examples/s | step ms | device-only step ms | {busy} |',
    '|---|---:|---:|---:|---:|',
  ]
  for name, r in report['pipelines'].items():
    lines.append(
      f'| {name} | {r["examples_per_s"]:,.0f} | {r["step_ms"]:.1f} | '
      f'{r["device_only_step_ms"]:.1f} | {min(r["busy_share"], 1.0):.0%} |'
    )
  return lines


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(
    prog='python -m bench.gpu_check',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  parser.add_argument(
    '--images', type=int, default=0, help=f'JPEGs to write (default {FULL["images"]:,})'
  )
  parser.add_argument(
    '--steps', type=int, default=0, help=f'timed steps per run (default {FULL["steps"]})'
  )
  parser.add_argument('--json', help='also write the figures here')
  parser.add_argument(
    '--smoke',
    action='store_true',
    help=f'tiny CNN, {SMOKE["images"]} images, {SMOKE["steps"]} steps, any device (for tests)',
  )
  parser.add_argument('--allow-cpu', action='store_true', help='run the real check without a GPU')
  parser.add_argument('--no-xla', action='store_true', help='no XLA on a GPU either')
  args = parser.parse_args(argv)
  if args.images < 0 or args.steps < 0:
    _fail('--images and --steps must be positive')

  started = time.monotonic()
  gpus = tf.config.list_physical_devices('GPU')
  if not gpus and not (args.smoke or args.allow_cpu):
    _fail(
      'TensorFlow sees no GPU (`make gpu-check` adds its CUDA libraries from '
      'requirements-gpu.lock); --allow-cpu runs the check on the CPU anyway, --smoke a tiny one'
    )

  settings = dict(SMOKE if args.smoke else FULL, smoke=args.smoke)
  settings['images'] = args.images or settings['images']
  settings['steps'] = args.steps or settings['steps']
  if gpus:
    details = tf.config.experimental.get_device_details(gpus[0])
    device, kind = '/GPU:0', 'gpu'
    label = f'GPU:0 ({details.get("device_name", "unknown")}), {len(gpus)} GPU(s) visible'
  else:
    device, kind, label = '/CPU:0', 'cpu', f'CPU ({os.cpu_count()} cores, no GPU visible)'
  policy = 'mixed_float16' if gpus else 'float32'
  xla = bool(gpus) and not args.no_xla
  report = {
    'device': label,
    'device_kind': kind,
    'model': 'tiny CNN (smoke)' if args.smoke else 'ResNet50',
    'smoke': args.smoke,
    'mixed_precision': policy,
    'xla': xla,
    'batch': recipes.BATCH,
    'images': settings['images'],
    'steps': settings['steps'],
    'warmup_steps': settings['warmup'],
    'seed_shuffle': settings['seed_shuffle'],
    'cores': os.cpu_count(),
    'tensorflow': tf.__version__,
    'keras': keras.__version__,
    'pipelines': {},
  }
  previous_policy = keras.mixed_precision.global_policy().name
  keras.mixed_precision.set_global_policy(policy)
  try:
    with tempfile.TemporaryDirectory(prefix='gpu_check-') as scratch:
      images = example_gen.write_images(os.path.join(scratch, 'images'), settings['images'])
      image_bytes = sum(
        os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(images)
        for name in names
      )
      examples = os.path.join(scratch, 'examples')
      seconds = example_gen.run_example_gen(
        images, examples, workers=0, shard_size_mb=max(image_bytes * 0.8 / SHARDS / 2**20, 0.01)
      )
      pattern = os.path.join(examples, 'Split-train', '*')
      files = input_pipeline.shard_files(pattern)
      report['train_shards'] = len(files)
      print(
        f'{settings["images"]:,} JPEGs → ImageExampleGen: {len(files)} train shards '
        f'in {seconds:.1f} s; device {label}',
        flush=True,
      )
      spec = ImageSpec(
        SIDE, SIDE, 3, [str(i) for i in range(CLASSES)], image_record.ENCODED, uniform=True
      )
      guard = input_pipeline.ShardGuard(os.path.join(scratch, 'salvage'))
      guard(files)  # scanned once, here; the project's pipeline reuses the scan
      data = input_data.DataSet(
        'jpeg',
        files,
        records=sum(r.good for r in guard.reports),
        megabytes=sum(os.path.getsize(f) for f in files) / 1e6,
        spec=spec,
        schema=None,  # only TFX's stock reader needs one
      )
      report['train_records'] = data.records
      datasets = {
        'project': lambda: input_pipeline.image_dataset(
          pattern, spec, recipes.BATCH, training=True, guard=guard
        ),
        # smoke: a smaller shuffle buffer (the recipe's 10,000 decoded images take ~6 GB)
        'seed_000': lambda: recipes.seed_000(data, settings['seed_shuffle']),
      }
      for name in PIPELINES:
        report['pipelines'][name] = measure(name, datasets[name](), settings, device, xla)
  finally:
    keras.mixed_precision.set_global_policy(previous_policy)
  report['seconds'] = time.monotonic() - started
  print('\n'.join(table(report)))
  print(f'{report["seconds"]:.0f} s in all')
  figures.save(report, args.json)
  return report


if __name__ == '__main__':
  main()
