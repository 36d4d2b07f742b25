"""Batch prediction on Beam: inputs (inference/inputs.py) → Beam's RunInference with
`SignatureHandler`, a ModelHandler that calls one signature of the pushed SavedModel exactly as
TensorFlow Serving does (the same inputs, batch first) → the predictions CSV
(contracts/predictions.py), the inputs skipped with their reasons, and optionally the requests
as PredictionLog TFRecords (contracts/request_log.py).

Why not tfx-bsl's RunInference (or TFX's BulkInferrer, built on it): it sends tf.Examples to
serving_default / classify / regress signatures only; the raw-input signatures take image bytes,
one tensor per column or strings.
"""

import collections
import glob
import json
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence

import apache_beam as beam
from apache_beam.ml.inference import base
import numpy as np

from contracts import csv_dialect, predictions, request_log, serving
from contracts.image_files import NOT_AN_IMAGE
from inference import inputs, module_model
from inference.model import Served
from utils import atomic, saved_model_ops

BATCH_SIZE = 64  # inputs per signature call (RunInference batches up to it)
SKIPPED_SUFFIX = '_skipped.csv'  # predictions.csv → predictions_skipped.csv: id, reason
SKIPPED_HEADER = ('id', 'reason')
_ROWS, _SKIPPED = 'rows', 'skipped'
# An image below a tenth of the model's height or width is scaled up more than 10x: its
# prediction rests on a few pixels (Result.scaled_up names it).
SCALED_UP_BEYOND = 10

# Inputs predicted or skipped so far in this process: the progress line reads it (the
# DirectRunner's in-memory mode runs the DoFns in this process).
_done = {'predicted': 0, 'skipped': 0}
_lock = threading.Lock()


def progress() -> Dict[str, int]:
  with _lock:
    return dict(_done)


def _count(what: str) -> None:
  with _lock:
    _done[what] += 1


def _numpy(values: List[Any], kind: str) -> np.ndarray:
  if kind in ('float', 'double'):
    return np.asarray(values, dtype=np.float32 if kind == 'float' else np.float64)
  if kind == 'int':
    return np.asarray(values, dtype=np.int64)
  return np.asarray([v.encode('utf-8') if isinstance(v, str) else v for v in values], dtype=object)


def request(kinds: Dict[str, str], batch: Sequence[Dict[str, Any]]) -> Dict[str, np.ndarray]:
  """A signature's inputs for a batch of inputs (dicts of one value per input name)."""
  return {name: _numpy([b[name] for b in batch], kind) for name, kind in kinds.items()}


class SignatureHandler(base.ModelHandler):
  """Calls signature `served.signature` of the SavedModel at `served.path` on batches of
  (order, id, inputs) elements; each PredictionResult's inference is {PROBABILITIES,
  CLASS_NAMES} of the signature's outputs ({PREDICTION}, the number, of a regression model's),
  or {'error': reason} when the signature fails on that input alone (a batch that fails is
  retried input by input)."""

  def __init__(self, served: Served, batch_size: int = BATCH_SIZE):
    super().__init__()
    self._served = served
    self._batch_size = batch_size

  def load_model(self):
    return saved_model_ops.load(self._served.path)

  def batch_elements_kwargs(self):
    return {'min_batch_size': 1, 'max_batch_size': self._batch_size}

  def _call(self, model, batch) -> Dict[str, np.ndarray]:
    import tensorflow as tf

    tensors = request(self._served.kinds, [element[2] for element in batch])
    function = model.signatures[self._served.signature]
    outputs = function(**{name: tf.constant(value) for name, value in tensors.items()})
    found = {name: value.numpy() for name, value in outputs.items()}
    module = self._served.module
    return module_model.standard_outputs(module, found) if module else found

  def run_inference(self, batch, model, inference_args=None) -> Iterable[base.PredictionResult]:
    try:
      outputs = self._call(model, batch)
    except Exception as e:
      if len(batch) == 1:
        return [base.PredictionResult(batch[0], {'error': _reason(e)})]
      return [r for element in batch for r in self.run_inference([element], model)]
    if self._served.regression:
      numbers = outputs[serving.PREDICTION].reshape(len(batch))
      return [
        base.PredictionResult(element, {serving.PREDICTION: float(numbers[i])})
        for i, element in enumerate(batch)
      ]
    return [
      base.PredictionResult(
        element,
        {
          serving.PROBABILITIES: outputs[serving.PROBABILITIES][i],
          serving.CLASS_NAMES: _text(outputs[serving.CLASS_NAMES][i])
          if serving.CLASS_NAMES in outputs
          else '',
        },
      )
      for i, element in enumerate(batch)
    ]

  def get_metrics_namespace(self) -> str:
    return 'predict'


def _text(value) -> str:
  return value.decode('utf-8', 'replace') if isinstance(value, bytes) else str(value)


def _reason(error: Exception) -> str:
  text = getattr(error, 'message', None) or str(error) or type(error).__name__
  # TensorFlow's: 'Graph execution error:', 'Detected at node …', '<stack…>', the reason, '[[…]]'
  lines = [
    line.strip()
    for line in text.splitlines()
    if line.strip()
    and not line.strip().startswith(
      ('Graph execution error', 'Detected at node', '<', '[[', 'File ')
    )
  ]
  return f'the model failed on it: {(lines or [text.strip()])[0][:300]}'


def _scaled_up(size, model_size) -> str:
  """'WxH' of an image `size` (width, height) below 1 / SCALED_UP_BEYOND of the model's
  (height, width), else ''."""
  if not size or not min(model_size):
    return ''
  (width, height), (model_height, model_width) = size, model_size
  small = width * SCALED_UP_BEYOND < model_width or height * SCALED_UP_BEYOND < model_height
  return f'{width}x{height}' if small else ''


_CSV_COUNTERS = ('repeated_headers', 'non_finite_cells')  # csv_dialect.Counts' and Result's


def _read(item, kind: str, layouts: Dict[str, inputs.CsvLayout], served: Served):
  index, relpath, path = item
  counts = csv_dialect.Counts()
  if kind == inputs.IMAGES:
    results = [inputs.read_image((index, 0), relpath, path)]
  elif kind == inputs.CSV and served.module:
    found = inputs.read_csv(index, relpath, path, layouts[relpath], served.module.kinds, counts)
    results = (_as_example(result, served.module) for result in found)
  elif kind == inputs.CSV:
    results = inputs.read_csv(index, relpath, path, layouts[relpath], served.kinds, counts)
  else:
    results = inputs.read_tfrecords(index, relpath, path)
  for result in results:
    if isinstance(result, inputs.Unreadable):
      _count('skipped')
      yield beam.pvalue.TaggedOutput(_SKIPPED, json.dumps([result.order, result.id, result.reason]))
    else:
      yield tuple(result)
  for name in _CSV_COUNTERS:
    if getattr(counts, name):
      beam.metrics.Metrics.counter('predict', name).inc(getattr(counts, name))


def _as_example(result, module: module_model.Parsed):
  """A CSV row read for a module file's model as the serialized tf.Example it parses."""
  if isinstance(result, inputs.Unreadable):
    return result
  record, reason = module_model.encode(result.inputs, module.kinds, module.required)
  if record is None:
    return inputs.Unreadable(result.order, result.id, reason)
  return result._replace(inputs={serving.EXAMPLES_INPUT: record})


class _ToRows(beam.DoFn):
  """PredictionResult → a predictions CSV row (JSON, with the input's order), or a skipped
  input; with `log`, the request as a PredictionLog (tagged 'log')."""

  def __init__(self, served: Served, top_k: int, log: bool):
    self._served, self._top_k, self._log = served, top_k, log
    self._turned = beam.metrics.Metrics.counter('predict', 'turned_upright')

  def process(self, result: base.PredictionResult):
    order, input_id, values = result.example
    inference = result.inference
    if 'error' in inference:
      _count('skipped')
      yield beam.pvalue.TaggedOutput(_SKIPPED, json.dumps([order, input_id, inference['error']]))
      return
    if values.get(inputs.TURNED):
      self._turned.inc()
    if self._served.regression:
      row = predictions.regression_row(input_id, inference[serving.PREDICTION])
      answer = {serving.PREDICTION: np.asarray([inference[serving.PREDICTION]], np.float32)}
    else:
      probabilities = np.asarray(inference[serving.PROBABILITIES], dtype=np.float64)
      row = predictions.row(input_id, probabilities, self._served.class_names, self._top_k)
      if inference[serving.CLASS_NAMES]:  # the class as the signature names it: the server's
        row[predictions.CLASS] = inference[serving.CLASS_NAMES]
      answer = {serving.PROBABILITIES: inference[serving.PROBABILITIES][None].astype(np.float32)}
    row.update(values.get(inputs.ROW_IDS, {}))
    _count('predicted')
    scaled_up = _scaled_up(values.get(inputs.SIZE), self._served.image_size)
    yield json.dumps([order, row, values.get(inputs.MISSING_NUMBERS, []), scaled_up])
    if self._log:
      sent = request(self._served.kinds, [values])
      log = request_log.predict_log(self._served.signature, sent, answer)
      yield beam.pvalue.TaggedOutput('log', log.SerializeToString())


class Result(NamedTuple):
  predicted: int
  skipped: List[Sequence[str]]  # (id, reason), in input order
  turned_upright: int
  out: str
  skipped_out: str  # '' when nothing was skipped
  log_files: List[str]
  missing_rows: int  # CSV rows predicted with empty, NA, inf or nan number cells (NaN: missing)
  missing: Dict[str, int]  # column → those rows with it empty, NA, inf or nan
  scaled_up: List[Sequence[str]]  # (id, 'WxH') of images below a tenth of the model's side
  numbers: Sequence[float] = ()  # a regression model's: (lowest, mean, highest) predicted
  repeated_headers: int = 0  # CSV rows repeating the header, skipped (csv_dialect's rules)
  non_finite_cells: int = 0  # CSV number cells inf or nan, read as missing


def skipped_path(out: str) -> str:
  stem = out[: -len('.csv')] if out.lower().endswith('.csv') else out
  return stem + SKIPPED_SUFFIX


def run(
  served: Served,
  data: inputs.DataFiles,
  out: str,
  *,
  layouts: Optional[Dict[str, inputs.CsvLayout]] = None,
  top_k: int = predictions.DEFAULT_TOP_K,
  log_dir: str = '',
  beam_args: Sequence[str] = (),
  batch_size: int = BATCH_SIZE,
) -> Result:
  """Predicts every input of `data`; writes `out` (and skipped_path(out), the log files) whole
  or not at all."""
  from apache_beam.ml.inference.base import RunInference
  from apache_beam.options.pipeline_options import PipelineOptions

  with _lock:
    _done.update(predicted=0, skipped=0)
  files = [(i, rel, os.path.join(data.root, rel)) for i, rel in enumerate(data.files)]
  others = [
    json.dumps([[len(files) + i, 0], rel, NOT_AN_IMAGE]) for i, rel in enumerate(data.others)
  ]
  folder = os.path.dirname(os.path.abspath(out))
  os.makedirs(folder, exist_ok=True)
  work = tempfile.mkdtemp(prefix='.predict-', dir=folder)
  options = PipelineOptions(
    list(beam_args) or ['--direct_running_mode=in_memory', '--direct_num_workers=1']
  )
  try:
    with beam.Pipeline(options=options) as pipeline:
      read = (
        pipeline
        | 'Files' >> beam.Create(files, reshuffle=False)
        | 'Read'
        >> beam.FlatMap(_read, data.kind, layouts or {}, served).with_outputs(
          _SKIPPED, main='inputs'
        )
      )
      results = (
        read.inputs
        | 'Predict' >> RunInference(SignatureHandler(served, batch_size))
        | 'Rows'
        >> beam.ParDo(_ToRows(served, top_k, bool(log_dir))).with_outputs(
          _SKIPPED, 'log', main=_ROWS
        )
      )
      _ = results[_ROWS] | 'WriteRows' >> beam.io.WriteToText(os.path.join(work, _ROWS))
      _ = (
        (read[_SKIPPED], results[_SKIPPED], pipeline | 'Others' >> beam.Create(others))
        | 'AllSkipped' >> beam.Flatten()
        | 'WriteSkipped' >> beam.io.WriteToText(os.path.join(work, _SKIPPED))
      )
      if log_dir:
        _ = results['log'] | 'WriteLog' >> beam.io.WriteToTFRecord(
          os.path.join(work, 'log', request_log.FILE_PREFIX),
          file_name_suffix=request_log.FILE_SUFFIX,
        )
    counts = {name: _counter(pipeline, name) for name in _CSV_COUNTERS}
    return _publish(work, out, log_dir, _counter(pipeline, 'turned_upright'), served)._replace(
      **counts
    )
  finally:
    shutil.rmtree(work, ignore_errors=True)


def _counter(pipeline, name: str) -> int:
  from apache_beam.metrics.metric import MetricsFilter

  try:
    query = pipeline.result.metrics().query(MetricsFilter().with_name(name))
    return int(sum(c.committed or 0 for c in query['counters']))
  except Exception:  # a runner without metrics: the count is not known
    return 0


def _lines(pattern: str) -> List:
  found = []
  for path in sorted(glob.glob(pattern)):
    with open(path, encoding='utf-8') as f:
      found += [json.loads(line) for line in f if line.strip()]
  return found


def _publish(work: str, out: str, log_dir: str, turned: int, served: Served) -> Result:
  import csv

  rows = sorted(_lines(os.path.join(work, _ROWS) + '*'), key=lambda r: r[0])
  skipped = [(i, reason) for _, i, reason in sorted(_lines(os.path.join(work, _SKIPPED) + '*'))]
  log_files = []
  if log_dir:
    os.makedirs(log_dir, exist_ok=True)
    stamp = time.strftime('%Y%m%dT%H%M%S')
    for path in sorted(glob.glob(os.path.join(work, 'log', request_log.FILE_PREFIX + '*'))):
      # Each run adds its own files (a server's log grows the same way): prefix-STAMP-NNNNN-of-M
      name = os.path.basename(path).replace(
        request_log.FILE_PREFIX, f'{request_log.FILE_PREFIX}-{stamp}', 1
      )
      target = os.path.join(log_dir, name)
      shutil.copyfile(path, target + '.partial')  # whole or not at all, on any file system
      os.replace(target + '.partial', target)
      log_files.append(target)
  with atomic.open_atomically(out, 'w') as f:
    header = predictions.header(served.id_columns, served.regression)
    writer = csv.DictWriter(f, header, lineterminator='\n')
    writer.writeheader()
    writer.writerows(row for _, row, _, _ in rows)
  skipped_out = skipped_path(out)
  if skipped:
    with atomic.open_atomically(skipped_out, 'w') as f:
      writer = csv.writer(f, lineterminator='\n')
      writer.writerow(SKIPPED_HEADER)
      writer.writerows(skipped)
  elif os.path.exists(skipped_out):  # an earlier run's list would describe other inputs
    os.remove(skipped_out)
  missing = collections.Counter(column for _, _, columns, _ in rows for column in columns)
  return Result(
    len(rows),
    skipped,
    turned,
    out,
    skipped_out if skipped else '',
    log_files,
    sum(1 for _, _, columns, _ in rows if columns),
    dict(missing.most_common()),
    [(row[predictions.ID], size) for _, row, _, size in rows if size],
    _spread([float(row[predictions.PREDICTION]) for _, row, _, _ in rows])
    if served.regression
    else (),
  )


def _spread(numbers: List[float]) -> Sequence[float]:
  """(lowest, mean, highest) of the predicted numbers; () for none."""
  return (min(numbers), float(np.mean(numbers)), max(numbers)) if numbers else ()
