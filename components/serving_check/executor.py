"""Runs the serving check (probe.py) in its own process and records its verdict as TFX's
InfraBlessing: the files INFRA_BLESSED / INFRA_NOT_BLESSED and `serving_check.json` (load time,
p50 / p99 per signature, problems) in the artifact; the component sets `blessed`, which the stock
Pusher reads from its `infra_blessing` input.
"""

import json
import os
import tempfile
from typing import List

import tensorflow as tf
from tfx.dsl.io import fileio

from components.serving_check import probe_process
from contracts import artifacts, serving, splits

TIMEOUT_SECONDS = 600  # a model that takes longer to load and answer does not serve
BLESSED_FILE, NOT_BLESSED_FILE = 'INFRA_BLESSED', 'INFRA_NOT_BLESSED'  # TFX InfraValidator's


def eval_records(examples_uri: str, count: int = serving.CHECK_EXAMPLES) -> List[bytes]:
  """The first `count` intact records of the eval split (damaged ones are skipped)."""
  records = []
  for path in sorted(fileio.glob(os.path.join(examples_uri, f'Split-{splits.EVAL}', '*'))):
    compression = 'GZIP' if path.endswith('.gz') else ''
    dataset = tf.data.TFRecordDataset(path, compression_type=compression)
    dataset = dataset.ignore_errors()
    records += [record.numpy() for record in dataset.take(count - len(records))]
    if len(records) >= count:
      break
  return records


def run_probe(model_dir: str, records: List[bytes], timeout: float = TIMEOUT_SECONDS) -> dict:
  """probe.check in the serving check's worker process (probe_process: TensorFlow alone, the
  project's model code never imported, the model loaded anew)."""
  with tempfile.TemporaryDirectory(prefix='serving-check-') as scratch:
    records_path, report_path = (os.path.join(scratch, name) for name in ('eval', 'report.json'))
    with tf.io.TFRecordWriter(records_path) as writer:
      for record in records:
        writer.write(record)
    argv = ['--model', model_dir, '--records', records_path, '--report', report_path]
    problem = probe_process.ask(argv, scratch, timeout)
    if problem or not os.path.exists(report_path):
      return {'problems': [problem or 'the serving process wrote no report']}
    with open(report_path) as f:
      return json.load(f)


def check(model_dir: str, examples_uri: str, model_blessed: bool, blessing_uri: str) -> dict:
  """The serving check of a blessed model (an unblessed one is not pushed anyway: not checked).
  Writes the verdict into blessing_uri; returns the report with `checked` and `serves`."""
  if model_blessed:
    report = run_probe(model_dir, eval_records(examples_uri))
    report.update(checked=True, serves=not report['problems'])
  else:
    report = {'checked': False, 'serves': False, 'problems': []}
  # Written in place: TFX publishes the artifact only once the component has succeeded.
  fileio.makedirs(blessing_uri)
  with fileio.open(os.path.join(blessing_uri, artifacts.SERVING_CHECK_FILE), 'w') as f:
    f.write(json.dumps(report, indent=2))
  with fileio.open(
    os.path.join(blessing_uri, BLESSED_FILE if report['serves'] else NOT_BLESSED_FILE), 'w'
  ) as f:
    f.write('')  # an empty marker, as TFX's InfraValidator writes
  return report
