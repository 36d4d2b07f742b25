"""The GPU check: how much of a training step's wall time the accelerator is busy when the
project's input function feeds it, against the seed article 000's recipe; and the same question
asked of the product path, the seed's "input keeps the accelerator busy" claim measured on what
users run: the whole pipeline (`pipeline.py run`) training ResNet-50 on those photos, as reported
by its Trainer's own input check.

  make gpu-check ARGS="--json OUT"   # CUDA libraries (requirements-gpu.lock) + the check
  .venv/bin/python -m bench.gpu_check [--images N] [--steps N] [--product-steps N] [--json OUT]
  .venv/bin/python -m bench.gpu_check --smoke [--json OUT]     # tiny models, any device, ~1 min

Data: N realistic 224x224 JPEGs (bench/example_gen.py write_images: random crops of two real
photos, ~15 KB, 10 class folders) turned into TFRecord shards by the project's ImageExampleGen
executor (Beam in this process, ~8 shards); only Split-train is read, repeated forever.

Model: keras.applications.ResNet50 (random weights, 224x224x3, 10 classes, logits), Adam, sparse
categorical cross-entropy; mixed_float16 and XLA on a GPU (what trainer/distribution.py picks for
one GPU), float32 without XLA on a CPU. Each pipeline trains its own copy, fed what it yields:
  project   trainer.image_input.image_dataset as the Trainer calls it (ShardGuard included):
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

Product path (--product-steps 0 leaves it out), run first, before this process touches the GPU
(its memory also grows on demand here, so the two processes can share one GPU): the same JPEG
folders go through `pipeline.py run --model resnet50 --weights none --train-steps N
--batch-size 64 --eval-steps 1 --min-accuracy 0 --allow-missed-classes --max-image-side 224`, a
subprocess of this Python in the repository root, ImageExampleGen to Pusher, with the Trainer's
own choices (mixed precision, XLA, --input-cache auto). From its <model_run>/training.json:
  input check     trainer/diagnosis.py before training: the input pipeline alone (examples/s),
                  one training step (ms, examples/s) and the share of time training waited for
                  input at that pace (stall_fraction; input-bound above 5%);
  training phase  steps x batch / the fit's wall seconds: includes the first step's tracing and
                  XLA compilation and one validation batch per epoch (up to 10), so it is below
                  the steady rate, and nearer it the more steps.
Also kept: the input cache decision, XLA, replicas, and the pipeline's exit code and wall time.
--smoke trains the project's cnn at 64x64 for 3 steps instead. A failed product path (exit
code not 0, or no training.json) is recorded with its log's tail, and the check exits 1 after
printing and saving the rest.

Without a GPU the real check refuses to run (exit 2) unless --allow-cpu is given.
"""

import glob
import json
import os
import subprocess
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
from trainer import image_input, shards
from trainer.data_spec import ImageSpec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIDE = 224
CLASSES = 10
SHARDS = 8  # ExampleGen's --shard-size-mb is set from the images' size to give about this many
PIPELINES = ('project', 'seed_000')
# FULL: about a minute of training steps on one H200, the whole run a few minutes, plus the
# product path's whole pipeline run (ResNet-50, product_steps; not yet timed on a GPU)
FULL = dict(images=2_000, steps=200, warmup=20, seed_shuffle=10_000, product_steps=400)
SMOKE = dict(images=60, steps=5, warmup=2, seed_shuffle=500, product_steps=3)
# the product path's model: what the pipeline trains (--smoke: its small CNN at 64x64, ~30 s)
PRODUCT_MODEL = ['--model', 'resnet50', '--weights', 'none']
SMOKE_PRODUCT_MODEL = ['--model', 'cnn', '--image-size', '64', '64']
LOG_TAIL = 3_000  # characters of a failed product path's log kept in the report


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


def product_path(images: str, output: str, settings: dict) -> dict:
  """`pipeline.py run` over the `images` folders into `output`: the Trainer's figures from its
  training.json, with 'error' (and the log's tail) when the run failed."""
  command = [
    sys.executable,
    'pipeline.py',
    'run',
    '--data',
    images,
    '--output',
    output,
    *(SMOKE_PRODUCT_MODEL if settings['smoke'] else PRODUCT_MODEL),
    '--train-steps',
    str(settings['product_steps']),
    '--batch-size',
    str(recipes.BATCH),
    '--eval-steps',
    '1',
    '--min-accuracy',
    '0',
    '--allow-missed-classes',
    '--min-eval-examples',
    '0',
    '--min-eval-class-examples',
    '0',
    '--max-image-side',
    str(SIDE),
  ]
  shown = ' '.join(['pipeline.py', *command[2:]])
  print(f'product path: {shown}', flush=True)
  os.makedirs(os.path.dirname(output), exist_ok=True)
  log_path = os.path.join(os.path.dirname(output), 'product_path.log')
  started = time.monotonic()
  with open(log_path, 'w') as log:
    rc = subprocess.call(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
  result = {'command': shown, 'exit_code': rc, 'seconds': time.monotonic() - started}
  runs = glob.glob(
    os.path.join(output, 'pipeline_root', 'Trainer', 'model_run', '*', 'training.json')
  )
  last_run = os.path.join(output, 'last_run.json')
  if os.path.exists(last_run):
    with open(last_run) as f:
      result['pipeline_wall_seconds'] = json.load(f).get('wall_seconds')
  if runs:
    with open(max(runs, key=os.path.getmtime)) as f:
      result.update(trainer_figures(json.load(f)))
  if rc or not runs:
    with open(log_path, errors='replace') as f:
      result['log_tail'] = f.read()[-LOG_TAIL:]
    result['error'] = f'pipeline.py run exited {rc}' + ('' if runs else ', no training.json')
  print(f'  product path: {product_summary(result)}', flush=True)
  return result


def trainer_figures(training: dict) -> dict:
  """What the report keeps of the Trainer's training.json."""
  batch, phases = training['batch_size'], training['phases']
  steps = sum(p['steps'] for p in phases)
  seconds = sum(p['seconds'] for p in phases)
  check = training.get('input_check')  # None under a distribution strategy (several replicas)
  figures = {
    'model': training['model'],
    'train_steps': training['train_steps'],
    'batch_size': batch,
    'batch_capped': training.get('batch_capped'),
    'xla': training['xla'],
    'replicas': training['replicas'],
    'distribution': training.get('distribution'),
    'input_cache': (training.get('input_cache') or {}).get('note'),
    'phases': phases,
    'phase_seconds': seconds,
    'phase_examples_per_s': steps * batch / seconds if seconds else None,
    'input_check': None,
  }
  if check:
    figures['input_check'] = {
      'stall_fraction': check['stall_fraction'],
      'input_bound': check['input_bound'],
      'input_examples_per_s': check['input_examples_per_second'],
      'step_ms': check['step_seconds'] * 1e3,
      'step_examples_per_s': batch / check['step_seconds'],
    }
  return figures


def product_summary(result: dict) -> str:
  if 'model' not in result:
    return result['error']
  check, rate = result['input_check'], result['phase_examples_per_s']
  parts = [
    f'{result["model"]}, {result["train_steps"]} steps of {result["batch_size"]}, '
    f'XLA {result["xla"]}, {result["replicas"]} replica(s)',
    'no input check'
    if check is None
    else f'training waited for input {check["stall_fraction"]:.1%}',
    f'training phase {result["phase_seconds"]:.1f} s'
    + ('' if rate is None else f' ({rate:,.0f} examples/s)'),
    f'exit {result["exit_code"]} after {result["seconds"]:.0f} s',
  ]
  return '; '.join(parts + ([result['error']] if 'error' in result else []))


def product_table(result: dict) -> list:
  lines = [f'product path: {product_summary(result)}']
  if 'model' not in result:
    return lines
  lines += [
    '| Trainer (pipeline.py run) | examples/s | step ms | input alone examples/s | '
    'waited for input |',
    '|---|---:|---:|---:|---:|',
  ]
  check = result['input_check']
  if check:
    lines.append(
      f'| input check | {check["step_examples_per_s"]:,.0f} | {check["step_ms"]:.1f} | '
      f'{check["input_examples_per_s"]:,.0f} | {check["stall_fraction"]:.1%} |'
    )
  rate = result['phase_examples_per_s']
  if rate:
    step_ms = result['batch_size'] * 1e3 / rate
    lines.append(f'| training phase (compilation included) | {rate:,.0f} | {step_ms:.1f} | – | – |')
  if result['input_cache']:
    lines.append(f'input cache: {result["input_cache"]}')
  return lines


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
  parser = figures.parser(__doc__, prog='python -m bench.gpu_check')
  parser.add_argument(
    '--images', type=int, default=0, help=f'JPEGs to write (default {FULL["images"]:,})'
  )
  parser.add_argument(
    '--steps', type=int, default=0, help=f'timed steps per run (default {FULL["steps"]})'
  )
  parser.add_argument(
    '--smoke',
    action='store_true',
    help=f'tiny CNN, {SMOKE["images"]} images, {SMOKE["steps"]} steps, any device (for tests)',
  )
  parser.add_argument('--allow-cpu', action='store_true', help='run the real check without a GPU')
  parser.add_argument('--no-xla', action='store_true', help='no XLA on a GPU either')
  parser.add_argument(
    '--product-steps',
    type=int,
    default=-1,
    help=f'--train-steps of the product path (default {FULL["product_steps"]}; 0: no product path)',
  )
  args = parser.parse_args(argv)
  if args.images < 0 or args.steps < 0:
    _fail('--images and --steps must be positive')

  started = time.monotonic()
  gpus = tf.config.list_physical_devices('GPU')
  for gpu in gpus:  # before the runtime starts: the product path's Trainer needs GPU memory too
    try:
      tf.config.experimental.set_memory_growth(gpu, True)
    except RuntimeError:  # already started (main called twice in one process)
      pass
  if not gpus and not (args.smoke or args.allow_cpu):
    _fail(
      'TensorFlow sees no GPU (`make gpu-check` adds its CUDA libraries from '
      'requirements-gpu.lock); --allow-cpu runs the check on the CPU anyway, --smoke a tiny one'
    )

  settings = dict(SMOKE if args.smoke else FULL, smoke=args.smoke)
  settings['images'] = args.images or settings['images']
  settings['steps'] = args.steps or settings['steps']
  if args.product_steps >= 0:
    settings['product_steps'] = args.product_steps
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
    'product_path': None,
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
      if settings['product_steps']:  # first: this process has not used the GPU yet
        report['product_path'] = product_path(
          images, os.path.join(scratch, 'product', 'output'), settings
        )
      examples = os.path.join(scratch, 'examples')
      seconds = example_gen.run_example_gen(
        images, examples, workers=0, shard_size_mb=max(image_bytes * 0.8 / SHARDS / 2**20, 0.01)
      )
      pattern = os.path.join(examples, 'Split-train', '*')
      files = shards.shard_files(pattern)
      report['train_shards'] = len(files)
      print(
        f'{settings["images"]:,} JPEGs → ImageExampleGen: {len(files)} train shards '
        f'in {seconds:.1f} s; device {label}',
        flush=True,
      )
      spec = ImageSpec(
        SIDE, SIDE, 3, [str(i) for i in range(CLASSES)], image_record.ENCODED, uniform=True
      )
      guard = shards.ShardGuard(os.path.join(scratch, 'salvage'))
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
        'project': lambda: image_input.image_dataset(
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
  if report['product_path']:
    print('\n'.join(product_table(report['product_path'])))
  print(f'{report["seconds"]:.0f} s in all')
  figures.save(report, args.json)
  if report['product_path'] and 'error' in report['product_path']:
    print(report['product_path'].get('log_tail', ''), file=sys.stderr)
    print(f'gpu_check: product path failed: {report["product_path"]["error"]}', file=sys.stderr)
    raise SystemExit(1)
  return report


if __name__ == '__main__':
  main()
