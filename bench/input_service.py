"""The Trainer's image input function in-process vs through tf.data service, 1 and 2 workers.

  .venv/bin/python -m bench.input_service [--quick] [--json OUT]

Data: the JPEG set of bench.input_pipeline (224x224 JPEGs cut from two real photos, 4 shards,
the project's record layout), batches of 64, `trainer.image_input.image_dataset` in training
mode exactly as the Trainer calls it. Every pipeline runs in its own process, pinned with
`taskset`, and is opened once; then, in interleaved rounds, each one settles (waits, then pulls
untimed: see bench.input_pipeline.rate) and is timed over a window. CPU per example is the CPU
time (user + system) of every process involved (consumer, workers, dispatcher) over the window,
divided by the examples delivered; `trainer` is the consumer's share, what stays on the
accelerator host.

  in_process_2core     the input function in the consumer process, both cores
  in_process_1core     the same, pinned to core 0
  service_1w           a dispatcher and 1 worker (pinned to core 1); consumer on core 0
  service_2w           a dispatcher and 2 workers (cores 0 and 1); consumer on core 0
  service_2w_parallel  service_2w's workers in processing mode parallel_epochs (each worker
                       reads every shard) instead of distributed_epoch (the Trainer's)
  service_2w_snappy    service_2w with batches compressed on the wire (compression 'AUTO',
                       tf.data's default; the Trainer sends them uncompressed)

Figures: service_2w / in_process_2core (the service's overhead at equal cores: both use exactly
cores 0 and 1), service_2w / service_1w (scaling when each worker has one core; the consumer
shares core 0 with a worker in service_2w and has it alone in service_1w), service_1w /
in_process_1core (one core of pipeline each; the service's consumer has core 0 to itself).
Medians of the rounds.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

from bench import figures as figures_file

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
warnings.filterwarnings('ignore', category=FutureWarning)  # google-* packages on Python 3.10

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 64
FULL = dict(images=6000, repeats=5, window_s=3.0, settle_s=0.75)
QUICK = dict(images=600, repeats=1, window_s=0.3, settle_s=0.2)
TARGETS = {'service_over_in_process': 0.8, 'workers2_over_workers1': 1.6}
# name: (consumer process, service (None: in-process), processing mode, compression)
PIPELINES = {
  'in_process_2core': ('both', None, None, None),
  'in_process_1core': ('core0', None, None, None),
  'service_1w': ('core0', 'one', 'distributed_epoch', None),
  'service_2w': ('core0', 'two', 'distributed_epoch', None),
  'service_2w_parallel': ('core0', 'two', 'parallel_epochs', None),
  'service_2w_snappy': ('core0', 'two', 'distributed_epoch', 'AUTO'),
}
RATIO_TERMS = {  # ratio: (numerator, denominator) pipelines
  'service_over_in_process': ('service_2w', 'in_process_2core'),
  'workers2_over_workers1': ('service_2w', 'service_1w'),
  'service_1w_over_in_process_1core': ('service_1w', 'in_process_1core'),
  'parallel_over_distributed': ('service_2w_parallel', 'service_2w'),
  'snappy_over_uncompressed': ('service_2w_snappy', 'service_2w'),
}
CONSUMER_CORES = {'both': '0,1', 'core0': '0'}
WORKER_CORES = {'one': ['1'], 'two': ['0', '1']}


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def _start(cores: str, *args: str) -> subprocess.Popen:
  """A `python -m ...` process pinned to `cores` (stdin and stdout are pipes)."""
  return subprocess.Popen(
    ['taskset', '-c', cores, sys.executable, '-m', *args],
    cwd=ROOT,
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    text=True,
    env=dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS='ignore::FutureWarning'),
  )


def _ready(process: subprocess.Popen) -> str:
  line = process.stdout.readline()
  if not line:
    raise RuntimeError(f'{" ".join(process.args)} exited with {process.wait()}')
  return line.strip()


def _cpu_seconds(pids) -> float:
  """User + system CPU seconds of these processes so far (all their threads)."""
  total = 0.0
  for pid in pids:
    with open(f'/proc/{pid}/stat') as f:
      fields = f.read().rsplit(')', 1)[1].split()
    total += (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
  return total


def consume(argv) -> None:
  """A consumer process: its pipelines, driven by commands on stdin (settle|measure NAME S)."""
  from trainer import image_input, input_service, shards
  from trainer.data_spec import ImageSpec

  setup = json.loads(argv[0])
  guard = shards.ShardGuard(setup['salvage_dir'])
  iterators = {}
  for name, (service, mode, compression) in setup['pipelines'].items():
    dataset = image_input.image_dataset(
      setup['files'], ImageSpec(**setup['spec']), BATCH, True, guard
    )
    if service:
      dataset = input_service.distribute(
        dataset, service, f'bench-{name}-{os.getpid()}', mode, compression
      )
    iterators[name] = iter(dataset)
    next(iterators[name])
  print('ready', flush=True)
  for line in sys.stdin:
    command, name, seconds = line.split()
    batches, seconds = iterators[name], float(seconds)
    if command == 'settle':
      time.sleep(seconds)
      started = time.monotonic()
      while time.monotonic() - started < seconds:
        next(batches)
      print('settled', flush=True)
    else:
      count, cpu, started = 0, time.process_time(), time.monotonic()
      while time.monotonic() - started < seconds:
        next(batches)
        count += BATCH  # training batches are full (drop_remainder)
      print(
        json.dumps(
          {
            'examples': count,
            'seconds': time.monotonic() - started,
            'cpu_s': time.process_time() - cpu,
          }
        ),
        flush=True,
      )


def _ask(process: subprocess.Popen, command: str) -> str:
  process.stdin.write(command + '\n')
  process.stdin.flush()
  return _ready(process)


def measure(folder: str, settings: dict) -> dict:
  """Starts the services and consumers, measures the interleaved rounds, stops everything."""
  from bench import input_data
  from contracts import image_record

  data = input_data.images(folder, settings['images'], image_record.ENCODED)
  print(
    f'jpeg: {data.records} records, {data.megabytes:.0f} MB in {len(data.files)} shards', flush=True
  )
  processes, services = [], {}
  try:
    addresses, dispatchers = {}, {}
    for name in WORKER_CORES:
      port = _free_port()
      addresses[name] = f'grpc://127.0.0.1:{port}'
      dispatchers[name] = _start('0,1', 'trainer.input_service', 'dispatcher', '--port', str(port))
    processes += dispatchers.values()
    consumers = {}
    for consumer, cores in CONSUMER_CORES.items():
      setup = {
        'files': data.files,
        'spec': vars(data.spec),
        'salvage_dir': os.path.join(folder, 'salvage', consumer),
        'pipelines': {
          name: (addresses[service] if service else '', mode, compression)
          for name, (where, service, mode, compression) in PIPELINES.items()
          if where == consumer
        },
      }
      consumers[consumer] = _start(cores, 'bench.input_service', '--consume', json.dumps(setup))
    processes += consumers.values()
    for name, dispatcher in dispatchers.items():  # then the pinned workers
      _ready(dispatcher)
      workers = [
        _start(
          core,
          'trainer.input_service',
          'worker',
          '--dispatcher',
          addresses[name],
          '--port',
          str(_free_port()),
        )
        for core in WORKER_CORES[name]
      ]
      processes += workers
      services[name] = [dispatcher] + workers
    for process in processes[len(dispatchers) :]:
      _ready(process)
    samples = {name: [] for name in PIPELINES}
    for repeat in range(settings['repeats']):
      for name, (where, service, _, _) in PIPELINES.items():
        pids = [p.pid for p in services[service]] if service else []
        _ask(consumers[where], f'settle {name} {settings["settle_s"]}')
        before = _cpu_seconds(pids)
        window = json.loads(_ask(consumers[where], f'measure {name} {settings["window_s"]}'))
        window['service_cpu_s'] = _cpu_seconds(pids) - before
        samples[name].append(window)
      print(
        f'  round {repeat + 1}/{settings["repeats"]}: '
        + ', '.join(f'{n} {s[-1]["examples"] / s[-1]["seconds"]:,.0f}' for n, s in samples.items()),
        flush=True,
      )
  finally:
    for process in reversed(processes):  # consumers before their dispatchers: no heartbeat noise
      process.kill()
      process.wait()
  result = {
    'records': data.records,
    'bytes_per_record': round(data.megabytes * 1e6 / data.records),
    'examples_per_s': {},
    'cpu_us_per_example': {},
    'trainer_cpu_us_per_example': {},
  }
  for name, windows in samples.items():
    result['examples_per_s'][name] = statistics.median(
      w['examples'] / w['seconds'] for w in windows
    )
    result['cpu_us_per_example'][name] = statistics.median(
      1e6 * (w['cpu_s'] + w['service_cpu_s']) / w['examples'] for w in windows
    )
    result['trainer_cpu_us_per_example'][name] = statistics.median(
      1e6 * w['cpu_s'] / w['examples'] for w in windows
    )
  rates = result['examples_per_s']
  result['ratios'] = {name: rates[a] / rates[b] for name, (a, b) in RATIO_TERMS.items()}
  per_round = {
    name: [w['examples'] / w['seconds'] for w in windows] for name, windows in samples.items()
  }
  result['ratio_rounds'] = {  # [lowest, highest] of each ratio taken round by round
    name: figures_file.ratio_rounds(per_round[a], per_round[b])
    for name, (a, b) in RATIO_TERMS.items()
  }
  result['ceilings'] = ceilings(result['cpu_us_per_example'], result['trainer_cpu_us_per_example'])
  result['targets'] = {
    name: {
      'target': target,
      'met': result['ratios'][name] >= target,
      'above_ceiling': target > result['ceilings'][name],
    }
    for name, target in TARGETS.items()
  }
  return result


def ceilings(cpu: dict, trainer_cpu: dict) -> dict:
  """The most each targeted ratio can be when every core involved is busy, from the CPU each
  pipeline spends per example in the same run: a pipeline on C busy cores delivers at most
  C / (CPU seconds per example).

  service_over_in_process: both use cores 0 and 1, so at most in-process CPU ÷ service CPU (all
  processes: the transfer is work the in-process pipeline never does).
  workers2_over_workers1: service_1w is bound by its one worker core (its CPU less the consumer's
  share); service_2w has two cores for everything.
  """
  return {
    'service_over_in_process': cpu['in_process_2core'] / cpu['service_2w'],
    'workers2_over_workers1': 2
    * (cpu['service_1w'] - trainer_cpu['service_1w'])
    / cpu['service_2w'],
  }


def table(result: dict) -> list:
  lines = [
    '| pipeline | examples/s | CPU µs per example (all processes) | of which trainer |',
    '|---|---|---|---|',
  ]
  for name in PIPELINES:
    lines.append(
      f'| {name} | {result["examples_per_s"][name]:,.0f} | '
      f'{result["cpu_us_per_example"][name]:,.0f} | '
      f'{result["trainer_cpu_us_per_example"][name]:,.0f} |'
    )
  lines.append('')
  lines += [
    f'{name}: {ratio:.2f}× (rounds {_range(result["ratio_rounds"][name])})'
    + _against_target(result, name)
    for name, ratio in result['ratios'].items()
  ]
  return lines


def _range(pair) -> str:
  return f'{pair[0]:.2f}–{pair[1]:.2f}×'


def _against_target(result: dict, name: str) -> str:
  if name not in TARGETS:
    return ''
  met = 'met' if result['targets'][name]['met'] else 'not met'
  return f' (target ≥ {TARGETS[name]}×: {met}; ceiling from CPU per example {result["ceilings"][name]:.2f}×)'


def main(argv=None) -> dict:
  argv = sys.argv[1:] if argv is None else argv
  if argv[:1] == ['--consume']:
    return consume(argv[1:])
  parser = argparse.ArgumentParser(
    prog='python -m bench.input_service',
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter,
  )
  parser.add_argument(
    '--quick', action='store_true', help='small data, one short round (for tests, not for figures)'
  )
  parser.add_argument('--json', help='write the figures here')
  args = parser.parse_args(argv)
  if len(os.sched_getaffinity(0)) < 2:
    parser.error('needs 2 cores (workers and consumers are pinned to cores 0 and 1)')
  settings = QUICK if args.quick else FULL
  started = time.monotonic()
  with tempfile.TemporaryDirectory() as folder:
    report = {
      'cores': os.cpu_count(),
      'quick': args.quick,
      'batch': BATCH,
      'jpeg': measure(folder, settings),
    }
  report['seconds'] = time.monotonic() - started
  print(f'medians of {settings["repeats"]} interleaved rounds, batch {BATCH}:')
  print('\n'.join(table(report['jpeg'])))
  figures_file.save(report, args.json)
  return report


if __name__ == '__main__':
  main()
