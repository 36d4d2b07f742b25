"""contracts/artifacts.py: the Beam file sinks' temporary folders a recovered job leaves in an
artifact are removed, and nothing else is."""

from contracts import artifacts


def test_remove_beam_temp_removes_every_sink_folder_left_and_nothing_else(tmp_path):
  evaluation, examples = tmp_path / 'Evaluation', tmp_path / 'Examples'
  kept = [
    examples / 'Split-train' / 'data_tfrecord-00000-of-00001.gz',
    evaluation / 'metrics-00000-of-00001.tfrecord',
    evaluation / 'beam-temp-named-like-a-folder.txt',  # a file, not a sink's folder
  ]
  left = [
    examples / 'Split-train' / 'beam-temp-data_tfrecord-5a1e',  # empty
    evaluation / 'beam-temp-metrics-77c0',  # with an earlier attempt's unfinished file
    evaluation / 'beam-temp-plots-9d3b',  # a sink folder inside it, removed with it
  ]
  for path in kept:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'x')
  for path in left:
    path.mkdir(parents=True)
  (left[1] / '0b5e1c.metrics').write_bytes(b'half')
  (left[2] / 'beam-temp-inner').mkdir()
  uris = [str(evaluation), str(examples), str(tmp_path / 'never-written')]
  removed = artifacts.remove_beam_temp(uris)
  assert sorted(removed) == sorted(str(p) for p in left)
  assert all(p.is_file() for p in kept)
  assert not any(p.exists() for p in left)
  assert artifacts.remove_beam_temp(uris) == []
