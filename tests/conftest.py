"""Shared fixtures: small real data sets written to temporary folders."""

import io
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import PIL.Image
import pytest

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_digits_subset(dest: str, per_class: int) -> str:
  """The first `per_class` scikit-learn digits of each class as <dest>/<digit>/<i>.png."""
  from sklearn.datasets import load_digits

  digits = load_digits()
  seen = {}
  for index, (pixels, target) in enumerate(zip(digits.images, digits.target)):
    if seen.get(target, 0) >= per_class:
      continue
    seen[target] = seen.get(target, 0) + 1
    os.makedirs(os.path.join(dest, str(target)), exist_ok=True)
    gray = np.round(pixels * (255.0 / 16.0)).astype(np.uint8)
    PIL.Image.fromarray(gray, 'L').save(os.path.join(dest, str(target), f'{index:04d}.png'))
  return dest


def image_bytes(array: np.ndarray, fmt: str, mode: str = None) -> bytes:
  buffer = io.BytesIO()
  PIL.Image.fromarray(array, mode).save(buffer, format=fmt)
  return buffer.getvalue()


@pytest.fixture(scope='session')
def digits_subset(tmp_path_factory) -> str:
  """40 digits per class (400 images), shared by the tests that only read it."""
  return write_digits_subset(str(tmp_path_factory.mktemp('digits')), per_class=40)


# The tests' tables are small by design (6 to ~80 eval examples, a few of a class): the eval
# split's minimum sizes (config.min_eval_examples, min_eval_class_examples) not checked. The
# defaults hold in default_run (the embedded digits, every default) and in unit tests.
SMALL_EVAL = ['--min-eval-examples', '0', '--min-eval-class-examples', '0']
# in_memory, as `--beam-mode auto` picks for these few images anyway; Beam's worker processes
# (~6 s per Beam component to start) run in tests/e2e/test_beam_modes.py, the S3 run and the
# ExampleGen SIGKILL test.
FAST = ['--train-steps', '150', '--min-accuracy', '0.3', '--beam-mode', 'in_memory', *SMALL_EVAL]


def library_noise(output: str) -> list:
  """The lines of a run's terminal output that come from libraries (warnings, log records)."""
  return [
    line
    for line in output.splitlines()
    if re.search(r'Warning|warnings\.warn|^\d{4}-\d\d-\d\d ', line)
  ]


def run_pipeline(data: str, output: str, *extra: str):
  """`pipeline.py run` in process with few training steps: (exit code, last_run.json)."""
  from cli import main as cli_main

  code = cli_main.main(['run', '--data', data, '--output', output, *FAST, *extra])
  with open(os.path.join(output, 'last_run.json')) as f:
    return code, json.load(f)


# In images_with_junk.
PHONE_PHOTO = '7/phone-3.jpg'
BMP_IMAGE = '5/scan.bmp'  # also an exact copy (pixels) of the first 5
COPIED_IMAGE = '4/copy.png'  # the first 4's file under another name
FILED_TWICE = '8/from-2.png'  # the first 2's file in the 8s folder: both left out


@pytest.fixture(scope='session')
def images_with_junk(digits_subset, tmp_path_factory) -> str:
  """The digits subset plus a corrupt JPEG and a text file (both excluded by ExampleGen), and
  four more digits: a phone-style JPEG stored sideways with EXIF orientation 6 (ExampleGen turns
  it upright: PHONE_PHOTO), a BMP (stored as PNG: BMP_IMAGE), a copy in its own class
  (COPIED_IMAGE) and one in another class (FILED_TWICE)."""
  root = str(tmp_path_factory.mktemp('junk') / 'digits')
  shutil.copytree(digits_subset, root)
  for relpath, source in ((PHONE_PHOTO, '7'), (BMP_IMAGE, '5')):
    first = sorted(os.listdir(os.path.join(digits_subset, source)))[0]
    with PIL.Image.open(os.path.join(digits_subset, source, first)) as digit:
      if relpath == BMP_IMAGE:
        digit.save(os.path.join(root, relpath), 'BMP')
        continue
      exif = PIL.Image.Exif()
      exif[0x0112] = 6  # viewers turn it a quarter clockwise: the digit upright again
      sideways = PIL.Image.fromarray(np.ascontiguousarray(np.rot90(np.asarray(digit), 1)))
      sideways.save(os.path.join(root, relpath), 'JPEG', exif=exif.tobytes(), quality=95)
  for relpath, source in ((COPIED_IMAGE, '4'), (FILED_TWICE, '2')):
    first = sorted(os.listdir(os.path.join(digits_subset, source)))[0]
    shutil.copy(os.path.join(digits_subset, source, first), os.path.join(root, relpath))
  with open(os.path.join(root, '3', 'broken.jpg'), 'wb') as f:
    f.write(b'\xff\xd8\xff\xe0' + b'\x00' * 100)  # a JPEG header and nothing else
  with open(os.path.join(root, '1', 'notes.txt'), 'w') as f:
    f.write('not an image')
  return root


@pytest.fixture(scope='session')
def default_run(tmp_path_factory):
  """`pipeline.py run` as a user types it, in its own process: the embedded digits, every
  default (Beam worker processes included). (completed process, output folder)."""
  output = str(tmp_path_factory.mktemp('default_run'))
  os.makedirs(output + '-tmp')  # a system temp folder of its own, to see what the run leaves
  done = subprocess.run(
    [sys.executable, os.path.join(ROOT, 'pipeline.py'), 'run', '--output', output],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=600,
    # A plain progress line every half second (default 10 s): several within its training.
    env=dict(os.environ, TMPDIR=output + '-tmp', TFRP_PROGRESS_SECONDS='0.5'),
  )
  return done, output


# 8×8 gray raw records are ~64 B of pixels: ~320 train images ≈ 21 KB → 2 shards of 0.015 MB.
FIRST_RUN_STORAGE = ['--compression', 'gzip', '--encoding', 'raw', '--shard-size-mb', '0.015']


# unlabeled_images: 8x8 PNGs as the digits are, 16x16 colour JPEGs two folders down, one photo
# stored sideways (EXIF orientation 6), a corrupt JPEG and a text file (both skipped).
UNLABELED_PNGS, UNLABELED_JPEGS = 12, 8
UNLABELED_IMAGES = UNLABELED_PNGS + UNLABELED_JPEGS + 1


def write_unlabeled_images(dest: str) -> str:
  """Held-out digits (none of digits_subset's) as a user's folder of new images, no classes."""
  from sklearn.datasets import load_digits

  images = load_digits().images[-(UNLABELED_PNGS + UNLABELED_JPEGS + 1) :]
  gray = [np.round(p * (255.0 / 16.0)).astype(np.uint8) for p in images]
  os.makedirs(os.path.join(dest, 'phone', '2026-12'))
  for i, pixels in enumerate(gray[:UNLABELED_PNGS]):
    PIL.Image.fromarray(pixels, 'L').save(os.path.join(dest, f'new-{i:02d}.png'))
  for i, pixels in enumerate(gray[UNLABELED_PNGS:-1]):
    colour = PIL.Image.fromarray(pixels, 'L').resize((16, 16)).convert('RGB')
    colour.save(os.path.join(dest, 'phone', '2026-12', f'IMG_{i:04d}.JPG'), quality=95)
  exif = PIL.Image.Exif()
  exif[0x0112] = 6
  sideways = PIL.Image.fromarray(np.ascontiguousarray(np.rot90(gray[-1], 1)))
  sideways.save(os.path.join(dest, 'phone', 'sideways.jpg'), exif=exif.tobytes(), quality=95)
  with open(os.path.join(dest, 'phone', 'broken.jpg'), 'wb') as f:
    f.write(b'\xff\xd8\xff\xe0' + b'\x00' * 100)
  with open(os.path.join(dest, 'notes.txt'), 'w') as f:
    f.write('not an image')
  return dest


@pytest.fixture(scope='session')
def first_run(images_with_junk, tmp_path_factory):
  """One whole pipeline run on images_with_junk, stored as FIRST_RUN_STORAGE (the default
  storage is default_run's), scoring write_unlabeled_images with --infer-data: (exit code,
  summary, output folder, the unlabeled folder)."""
  output = str(tmp_path_factory.mktemp('run'))
  unlabeled = write_unlabeled_images(str(tmp_path_factory.mktemp('unlabeled') / 'new'))
  code, result = run_pipeline(
    images_with_junk, output, *FIRST_RUN_STORAGE, '--infer-data', unlabeled
  )
  return code, result, output, unlabeled


@pytest.fixture(scope='session')
def tabular_run(tmp_path_factory):
  """A whole run on 2,000 taxi rows in span/version folders (span 2 version 2 is the latest:
  1,700 rows, TABULAR_COPIES of them twice, TABULAR_CONFLICTS again with the other label; every
  50th row from the 300th has no tips, --label-default 0), and
  --infer-data INFER_ROWS held-out rows without the tips column, as a spreadsheet exports them
  (CRLF): (exit code, summary, output folder, data folder)."""
  from tests.support.tfx_data import TAXI_CSV

  with open(TAXI_CSV) as src:
    lines = [line for _, line in zip(range(2001 + INFER_ROWS), src)]
  header, *rows = lines[:2001]
  rows[300::50] = [row.rsplit(',', 1)[0] + ',\n' for row in rows[300::50]]  # tips (last): none
  folder = tmp_path_factory.mktemp('tabular_run')
  data, output = folder / 'taxi', str(folder / 'out')
  # The latest version as a spreadsheet's export often is: TABULAR_COPIES rows again, and
  # TABULAR_CONFLICTS trips again with the other answer to "tipped?" (ExampleGen leaves both out).
  latest = rows[300:] + rows[310 : 310 + TABULAR_COPIES]
  for row in rows[400 : 400 + TABULAR_CONFLICTS]:
    cells = row.rstrip('\n').split(',')
    cells[-1] = '0' if float(cells[-1] or 0) > 0 else '2.5'
    latest.append(','.join(cells) + '\n')
  for span, version, chunk in ((1, 1, rows[:300]), (2, 1, rows[300:600]), (2, 2, latest)):
    version_folder = data / f'span-{span}' / f'version-{version}'
    version_folder.mkdir(parents=True)
    (version_folder / 'trips.csv').write_text(header + ''.join(chunk))
  unlabeled = folder / 'unlabeled.csv'  # the label column is the last: cut off
  unlabeled.write_bytes(
    b''.join(
      line.rstrip('\n').rsplit(',', 1)[0].encode() + b'\r\n' for line in lines[:1] + lines[2001:]
    )
  )
  code, result = run_pipeline(
    str(data),
    output,
    '--label',
    'tips',
    '--label-threshold',
    '0',
    '--label-default',
    '0',
    '--slice-feature',
    'payment_type',
    '--infer-data',
    str(unlabeled),
  )
  return code, result, output, str(data)


INFER_ROWS = 40  # tabular_run's --infer-data rows
TABULAR_COPIES, TABULAR_CONFLICTS = 20, 10  # tabular_run's latest version: rows again


@pytest.fixture(scope='session')
def taxi_module_run(tmp_path_factory):
  """TFX's own taxi pipeline (its module file: Transform, Trainer, Evaluator, Pusher) on 400
  rows with few train steps (tests/support/taxi_module_run.py): a TaxiRun."""
  from tests.support import taxi_module_run

  return taxi_module_run.run(str(tmp_path_factory.mktemp('taxi_module_run')))


SHARED_RUNS = ('first_run', 'default_run', 'tabular_run', 'taxi_module_run')


def shared_runs(item) -> list:
  """The SHARED_RUNS (whole-pipeline runs) a test needs, directly or through other fixtures."""
  names = getattr(item, 'fixturenames', ())
  return [name for name in SHARED_RUNS if name in names]


# Before pytest's `-m` deselection (so `not slow` sees the marker) and pytest-xdist's hook (which
# turns the group marker into a group).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
  """Tests that need a whole-pipeline run of SHARED_RUNS are `slow` (make test-fast leaves them
  out, make test runs them). Tests that share a run (one of SHARED_RUNS, or any module-scoped
  fixture) go to the same pytest-xdist worker (`--dist loadgroup`), so each run happens once."""
  for item in items:
    shared = shared_runs(item)
    definitions = getattr(getattr(item, '_fixtureinfo', None), 'name2fixturedefs', {})
    if shared:
      item.add_marker(pytest.mark.slow)
      item.add_marker(pytest.mark.xdist_group(shared[0]))
    elif any(defs[-1].scope == 'module' for defs in definitions.values()):
      item.add_marker(pytest.mark.xdist_group(item.nodeid.split('::')[0]))
