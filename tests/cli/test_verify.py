"""`pipeline.py verify`: per-shard report, exit codes, --repair, what is missing."""

import glob
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

from cli import main as cli_main
from tests.conftest import ROOT, library_noise
from tests.support import shards


@pytest.fixture
def damaged_folder(tmp_path):
  """A clean shard, one with the 11th record damaged and one truncated, under Split-*/."""
  records = shards.digit_records()
  folder = tmp_path / 'examples'
  for split in ('train', 'eval'):
    os.makedirs(folder / f'Split-{split}')
  shards.write_shard(str(folder / 'Split-eval' / 'data-00000-of-00001'), records)
  damaged = shards.write_shard(str(folder / 'Split-train' / 'data-00000-of-00002'), records)
  shards.damage(
    damaged, shards.record_offset(open(damaged, 'rb').read(), shards.DAMAGED_INDEX) + 30
  )
  cut = shards.write_shard(str(folder / 'Split-train' / 'data-00001-of-00002'), records[:100])
  data = open(cut, 'rb').read()
  open(cut, 'wb').write(data[:-7])
  (folder / 'labels.txt').write_text('not a shard\n')
  return folder, records


def test_reports_every_shard_and_exits_1_on_damage(damaged_folder, capsys):
  folder, _ = damaged_folder
  assert cli_main.main(['verify', str(folder), '--workers', '2']) == 1
  out = capsys.readouterr().out
  assert 'verifying 3 shard(s) with 2 worker(s)' in out
  assert 'Split-eval/data-00000-of-00001: ok, 500 records' in out
  assert 'Split-train/data-00000-of-00002: DAMAGED: 499 good, 1 corrupt' in out
  assert 'Split-train/data-00001-of-00002: DAMAGED: 99 good, 0 corrupt (0 bytes lost), ' in out
  assert 'labels.txt' not in out
  assert 'total: 3 shard(s), 2 damaged; 1098 good records, 1 corrupt' in out


def test_a_damaged_split_says_how_many_recorded_records_are_missing(damaged_folder, capsys):
  """A truncated shard hides how many records its lost tail held: the recorded count says."""
  folder, _ = damaged_folder
  (folder / 'image_meta.json').write_text(json.dumps({'split_counts': {'train': 600, 'eval': 500}}))
  assert cli_main.main(['verify', str(folder)]) == 1
  out, err = capsys.readouterr()
  assert f'{folder}/Split-train: 2 records missing (598 intact of 600 recorded in ' in out
  assert 'Split-eval: ' not in out  # clean and complete
  assert err == 'damage found in 2 shard(s)\nincomplete: 2 record(s) missing\n'


def test_repair_writes_every_intact_record_and_nothing_else(damaged_folder, tmp_path, capsys):
  folder, records = damaged_folder
  repaired = tmp_path / 'repaired'
  assert cli_main.main(['verify', str(folder), '--repair', str(repaired)]) == 1
  damaged = shards.read_all(str(repaired / 'Split-train' / 'data-00000-of-00002'))
  assert damaged == records[: shards.DAMAGED_INDEX] + records[shards.DAMAGED_INDEX + 1 :]
  assert shards.read_all(str(repaired / 'Split-train' / 'data-00001-of-00002')) == records[:99]
  assert shards.read_all(str(repaired / 'Split-eval' / 'data-00000-of-00001')) == records
  capsys.readouterr()
  assert cli_main.main(['verify', str(repaired)]) == 0
  assert 'total: 3 shard(s), 0 damaged; 1098 good records' in capsys.readouterr().out


@pytest.mark.parametrize(
  'make,message',
  [
    (lambda tmp: [str(tmp / 'missing')], 'no such file or folder'),
    (lambda tmp: [str(tmp)], 'no TFRecord shards under'),
  ],
)
def test_bad_input_is_one_line(tmp_path, capsys, make, message):
  (tmp_path / 'readme.txt').write_text('x')
  assert cli_main.main(['verify', *make(tmp_path)]) == 2
  err = capsys.readouterr().err
  assert err.startswith('error: ') and err.count('\n') == 1 and message in err


def test_repair_into_a_used_folder_is_refused(damaged_folder, tmp_path, capsys):
  folder, _ = damaged_folder
  assert cli_main.main(['verify', str(folder), '--repair', str(folder / 'Split-train')]) == 2
  assert 'must not contain the shards' in capsys.readouterr().err
  (tmp_path / 'used').mkdir()
  (tmp_path / 'used' / 'x').write_text('')
  assert cli_main.main(['verify', str(folder), '--repair', str(tmp_path / 'used')]) == 2
  assert 'not empty' in capsys.readouterr().err


def newest_examples(output: str) -> str:
  """The newest ImageExampleGen Examples artifact of a run's output folder."""
  found = glob.glob(os.path.join(output, 'pipeline_root', 'ImageExampleGen', 'examples', '*'))
  return max(found, key=lambda path: int(os.path.basename(path)))


@pytest.fixture
def artifact(first_run, tmp_path):
  """A copy of first_run's Examples artifact: two GZIP shards per split, image_meta.json."""
  copy = shutil.copytree(newest_examples(first_run[2]), tmp_path / 'examples')
  for split in ('train', 'eval'):
    assert sorted(os.listdir(copy / f'Split-{split}')) == [
      'data-00000-of-00002.gz',
      'data-00001-of-00002.gz',
    ]
  with open(copy / 'image_meta.json') as f:
    return copy, json.load(f)['split_counts']


@pytest.mark.slow  # first_run: a whole pipeline run
def test_a_clean_artifact_is_clean(artifact, capsys):
  folder, counts = artifact
  assert cli_main.main(['verify', str(folder)]) == 0
  out, err = capsys.readouterr()
  assert out.count(': ok, ') == 4 and ': missing' not in out and err == ''
  assert f'{sum(counts.values())} good records' in out


@pytest.mark.slow  # first_run: a whole pipeline run
def test_a_missing_shard_is_named_with_the_records_it_held(artifact, capsys):
  folder, counts = artifact
  os.remove(folder / 'Split-train' / 'data-00001-of-00002.gz')
  assert cli_main.main(['verify', str(folder)]) == 1
  out, err = capsys.readouterr()
  assert f'{folder}/Split-train/data-00001-of-00002.gz: missing (1 of 2 shards present)\n' in out
  present = int(re.search(r'Split-train/data-00000-of-00002.gz: ok, (\d+) records', out)[1])
  lost = counts['train'] - present
  assert (
    f'{folder}/Split-train: {lost} records missing ({present} of {counts["train"]} recorded in '
    'image_meta.json)\n' in out
  )
  assert err == f'incomplete: 1 shard(s), {lost} record(s) missing\n'


def _one_missing(capsys, path, line: str, what: str) -> None:
  """`verify path` names one missing thing: `line` in its output, and says so on stderr."""
  assert cli_main.main(['verify', str(path)]) == 1
  out, err = capsys.readouterr()
  assert line + '\n' in out
  assert out.count(': missing (') == 1 and err == f'incomplete: 1 {what} missing\n'


def test_a_missing_middle_shard_of_a_numbered_set_is_named(tmp_path, capsys):
  """As TFX's ExampleGens name them, no side files."""
  records, split = shards.digit_records(20), tmp_path / 'Split-train'
  split.mkdir()
  for index in range(3):
    shards.write_shard(str(split / f'data_tfrecord-{index:05d}-of-00003.gz'), records, 'GZIP')
  os.remove(split / 'data_tfrecord-00001-of-00003.gz')
  line = f'{split}/data_tfrecord-00001-of-00003.gz: missing (2 of 3 shards present)'
  _one_missing(capsys, tmp_path, line, 'shard(s)')


@pytest.mark.slow  # first_run: a whole pipeline run
def test_a_missing_split_is_named(artifact, capsys):
  folder, _ = artifact
  shutil.rmtree(folder / 'Split-eval')
  line = f"{folder}/Split-eval: missing (split 'eval' recorded in image_meta.json)"
  _one_missing(capsys, folder, line, 'split(s)')


@pytest.mark.slow  # first_run: a whole pipeline run
def test_an_output_folder_is_checked_against_ml_metadata(first_run, tmp_path, capsys):
  """A copy of the output folder (ML Metadata's URIs name the original): the Examples artifact's
  recorded splits and counts apply; StatisticsGen's counts where the artifact has none."""
  _, _, output, _ = first_run
  copy = tmp_path / 'output'
  for part in ('ImageExampleGen', 'StatisticsGen', 'ExampleValidator'):
    shutil.copytree(os.path.join(output, 'pipeline_root', part), copy / 'pipeline_root' / part)
  shutil.copy(os.path.join(output, 'metadata.sqlite'), copy / 'metadata.sqlite')
  assert cli_main.main(['verify', str(copy)]) == 0  # FeatureStats.pb, SchemaDiff.pb: no shards
  assert 'records missing' not in capsys.readouterr().out

  examples = copy / os.path.relpath(newest_examples(output), output)
  os.remove(examples / 'image_meta.json')
  shutil.rmtree(examples / 'Split-eval')
  os.remove(examples / 'Split-train' / 'data-00001-of-00002.gz')
  assert cli_main.main(['verify', str(copy)]) == 1
  out = capsys.readouterr().out
  assert f"{examples}/Split-eval: missing (split 'eval' recorded in ML Metadata)\n" in out
  assert re.search(rf'{examples}/Split-train: \d+ records missing \(\d+ of \d+ recorded in ML', out)
  with sqlite3.connect(copy / 'metadata.sqlite') as store:  # as TFX's ExampleGens record it
    store.execute("DELETE FROM ArtifactProperty WHERE name = 'split_counts'")
  assert cli_main.main(['verify', str(copy)]) == 1
  out = capsys.readouterr().out
  assert re.search(
    rf'{examples}/Split-train: \d+ records missing \(\d+ of \d+ counted by Stat', out
  )


@pytest.mark.slow  # first_run: a whole pipeline run
def test_the_terminal_shows_no_library_noise(artifact):
  """Its scan workers are fresh processes: the parent's warnings filter does not reach them."""
  folder, _ = artifact
  done = subprocess.run(
    [sys.executable, os.path.join(ROOT, 'pipeline.py'), 'verify', str(folder), '--workers', '2'],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=300,
  )
  assert done.returncode == 0, done.stderr
  assert library_noise(done.stdout + done.stderr) == []
  assert done.stderr == ''
