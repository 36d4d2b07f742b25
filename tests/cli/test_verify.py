"""`pipeline.py verify`: per-shard report, exit codes, --repair."""

import os

import pytest

from cli import main as cli_main
from tests import shards


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
