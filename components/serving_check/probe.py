"""The serving check itself, run in a fresh process as a model server would load the model:
`python -m components.serving_check.probe --model DIR --records FILE --report JSON`, or with
`--serve` alone, a worker answering such checks read from stdin (probe_process.py).

It loads the SavedModel with TensorFlow alone (no project model code), sends every signature a
batch built from real eval records (serving_default the records themselves; predict_image_bytes
their image bytes; predict_columns their values by column; predict_text their words, read back
through the model's own vocabulary asset), and checks that every prediction signature answers
one row of probabilities per example, each summing to 1 (a regression model: one finite number
per example, bulk_inference's as [batch, 1]), and that the raw-input signatures agree with
serving_default on the same examples. Then it times single-example requests to each
signature (p50 / p99 after a warm-up call): what one client request costs on this machine.
"""

import argparse
import json
import math
import os
import signal
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

import numpy as np
import tensorflow as tf

from contracts import artifacts, image_record, serving, text_record, trainer_options
from utils import atomic, fingerprint, saved_model_ops

SUM_TOLERANCE = 1e-3  # probabilities sum to 1 within float32 softmax error
AGREEMENT_TOLERANCE = 1e-3  # raw-input signatures vs serving_default, per probability
# A regression model's numbers vs serving_default's: relative to the number (float32 in the
# label's units: a price in the hundreds of thousands differs in its 7th digit), at least 1e-3.
REQUESTS = 100  # single-example requests timed per signature
_MESSAGE_LIMIT = 200


def _feature_values(record: tf.train.Example, key: str) -> list:
  feature = record.features.feature.get(key)
  if feature is None:
    return []
  kind = feature.WhichOneof('kind')
  return list(getattr(feature, kind).value) if kind else []


def _image_bytes(records: List[bytes]) -> tf.Tensor:
  """What a client sends: the stored JPEG/PNG bytes; raw pixels are sent as lossless PNG."""
  payloads = []
  for serialized in records:
    record = tf.train.Example.FromString(serialized)
    (payload,) = _feature_values(record, image_record.IMAGE_KEY)
    if not payload.startswith((b'\xff\xd8', b'\x89PNG')):
      shape = [
        _feature_values(record, key)[0]
        for key in (image_record.HEIGHT_KEY, image_record.WIDTH_KEY, image_record.CHANNELS_KEY)
      ]
      pixels = np.frombuffer(payload, np.uint8).reshape(shape)
      payload = tf.io.encode_png(pixels).numpy()
    payloads.append(payload)
  return tf.constant(payloads)


def _columns(records: List[bytes], specs: Dict[str, tf.TensorSpec]) -> Dict[str, tf.Tensor]:
  """Each record's value by column, as a client has them: a missing number NaN, text ''; a list
  column ([B, N]) its N values, those a record lacks NaN."""
  parsed = [tf.train.Example.FromString(serialized) for serialized in records]
  column_of = {serving.column_input(c): c for record in parsed for c in record.features.feature}
  columns = {}
  for key, spec in specs.items():
    if spec.shape.rank == 2:
      width = spec.shape[1]
      values = [_feature_values(record, column_of.get(key, key))[:width] for record in parsed]
      rows = [[float(v) for v in row] + [math.nan] * (width - len(row)) for row in values]
      columns[key] = tf.constant(rows, spec.dtype, shape=[len(rows), width])
      continue
    values = [_feature_values(record, column_of.get(key, key))[:1] for record in parsed]
    if spec.dtype == tf.string:
      columns[key] = tf.constant([v[0] if v else b'' for v in values], tf.string)
    else:
      columns[key] = tf.constant([float(v[0]) if v else math.nan for v in values], spec.dtype)
  return columns


def _texts(records: List[bytes], vocabulary: List[str]) -> tf.Tensor:
  """Each record's token ids as words again (an out-of-vocabulary id as a word the vocabulary
  lacks): raw text that the model's tokenizer must turn back into the same ids."""
  known = set(vocabulary)
  unknown = next(w for w in (f'zq{"x" * n}' for n in range(1, 64)) if w not in known)
  texts = []
  for serialized in records:
    record = tf.train.SequenceExample.FromString(serialized)
    steps = record.feature_lists.feature_list[text_record.TOKENS_KEY].feature
    ids = [step.int64_list.value[0] for step in steps]
    texts.append(
      ' '.join(
        vocabulary[i] if len(text_record.RESERVED) <= i < len(vocabulary) else unknown for i in ids
      )
    )
  return tf.constant(texts)


def _vocabulary(model_dir: str) -> List[str]:
  path = os.path.join(model_dir, 'assets', artifacts.VOCABULARY_FILE)
  with tf.io.gfile.GFile(path) as f:
    return f.read().splitlines()


def request(name: str, signature: Callable, records: List[bytes], model_dir: str) -> dict:
  """The inputs of `signature` for `records`, built the way its clients build them."""
  specs = signature.structured_input_signature[1]
  if name == serving.IMAGE_BYTES:
    return {serving.IMAGE_BYTES_INPUT: _image_bytes(records)}
  if name == serving.TEXT:
    return {serving.TEXT_INPUT: _texts(records, _vocabulary(model_dir))}
  if list(specs) == [serving.EXAMPLES_INPUT]:
    return {serving.EXAMPLES_INPUT: tf.constant(records)}
  return _columns(records, specs)


def _problems_of(
  name: str, outputs: dict, count: int, reference: Optional[np.ndarray]
) -> List[str]:
  """What is wrong with one prediction signature's answer to `count` examples."""
  if serving.PROBABILITIES not in outputs:
    return [f'{name}: no {serving.PROBABILITIES} output (has {", ".join(sorted(outputs))})']
  probabilities = outputs[serving.PROBABILITIES].numpy()
  width = reference.shape[1] if reference is not None else None
  if (
    probabilities.ndim != 2
    or probabilities.shape[0] != count
    or (width and probabilities.shape[1] != width)
  ):
    expected = f'[{count}, {width or "classes"}]'
    return [f'{name}: {serving.PROBABILITIES} of shape {list(probabilities.shape)}, not {expected}']
  sums = probabilities.sum(axis=1)
  if not np.all(np.isfinite(probabilities)) or np.any(np.abs(sums - 1) > SUM_TOLERANCE):
    return [f'{name}: probabilities sum to {np.nanmin(sums):.3g}–{np.nanmax(sums):.3g}, not 1']
  if reference is not None:
    difference = float(np.max(np.abs(probabilities - reference)))
    if difference > AGREEMENT_TOLERANCE:
      return [
        f"{name}: probabilities differ from {serving.SERVING_DEFAULT}'s by up to "
        f'{difference:.3g} on the same {count} eval examples'
      ]
  class_ids = outputs.get(serving.CLASS_IDS)
  if class_ids is not None and not np.array_equal(class_ids.numpy(), probabilities.argmax(axis=1)):
    return [f'{name}: {serving.CLASS_IDS} is not the most probable class']
  return []


def _regression_problems(
  name: str, outputs: dict, count: int, reference: Optional[np.ndarray]
) -> List[str]:
  """What is wrong with one regression signature's answer to `count` examples: PREDICTION as
  [count] ([count, 1] from BULK_INFERENCE), finite, and as serving_default's (`reference`)."""
  if serving.PREDICTION not in outputs:
    return [f'{name}: no {serving.PREDICTION} output (has {", ".join(sorted(outputs))})']
  values = outputs[serving.PREDICTION].numpy()
  shape = [count, 1] if name == serving.BULK_INFERENCE else [count]
  if list(values.shape) != shape:
    return [f'{name}: {serving.PREDICTION} of shape {list(values.shape)}, not {shape}']
  values = values.reshape(-1)
  finite = np.isfinite(values)
  if not finite.all():
    return [
      f'{name}: {int((~finite).sum())} of {count} predictions are not finite numbers (the first: '
      f'{values[~finite][0]}, eval example {int(np.argmin(finite)) + 1})'
    ]
  if reference is not None:
    difference = float(np.max(np.abs(values - reference) / np.maximum(1.0, np.abs(reference))))
    if difference > AGREEMENT_TOLERANCE:
      return [
        f"{name}: predictions differ from {serving.SERVING_DEFAULT}'s by up to {difference:.3g} "
        f'(relative) on the same {count} eval examples'
      ]
  return []


def _user_problems(
  name: str, outputs: dict, count: int, reference: Optional[np.ndarray]
) -> List[str]:
  """A module file's model (its own output names): every output one row per example, numbers
  finite."""
  del reference  # its signatures answer different things: nothing to agree with
  problems = []
  for key, value in sorted(outputs.items()):
    value = value.to_dense() if isinstance(value, tf.SparseTensor) else value
    if value.shape.rank < 1 or value.shape[0] != count:
      problems.append(f'{name}: {key} of shape {value.shape.as_list()}, not one row per example')
    elif value.dtype.is_floating and not np.all(np.isfinite(value.numpy())):
      problems.append(f'{name}: {key} holds numbers that are not finite')
  return problems


def _takes_examples(signature: Callable) -> bool:
  """One string input: serialized tf.Examples, as a module file's signatures take them."""
  specs = list(signature.structured_input_signature[1].values())
  return len(specs) == 1 and specs[0].dtype == tf.string


def _latency_ms(signature: Callable, inputs: dict, requests: int) -> List[float]:
  """Wall times of `requests` single-example calls (cycling through the examples)."""
  count = int(next(iter(inputs.values())).shape[0])
  singles = [{key: value[i : i + 1] for key, value in inputs.items()} for i in range(count)]
  signature(**singles[0])  # warm-up: the first call of a shape builds its kernels
  times = []
  for i in range(requests):
    start = time.perf_counter()
    signature(**singles[i % count])
    times.append((time.perf_counter() - start) * 1000)
  return times


def _failure(name: str, error: Exception) -> str:
  first_line = (str(error).strip().splitlines() or [''])[0][:_MESSAGE_LIMIT]
  return f'{name}: {type(error).__name__}: {first_line}'


def check(model_dir: str, records: List[bytes], requests: int = REQUESTS) -> dict:
  """Loads the model, calls every signature with `records`, times `requests` single-example
  requests each. {'load_seconds', 'examples', 'signatures': {name: {p50_ms, p99_ms}},
  'problems': [one line each]}: no problem means the model serves."""
  report = {'pid': os.getpid(), 'examples': len(records), 'signatures': {}, 'problems': []}
  start = time.perf_counter()
  try:
    loaded = saved_model_ops.load(model_dir)
  except Exception as error:  # whatever stops a server from loading it
    report['problems'].append(_failure('the model did not load', error))
    return report
  report['load_seconds'] = round(time.perf_counter() - start, 3)
  signatures = dict(loaded.signatures)
  if serving.SERVING_DEFAULT not in signatures:
    report['problems'].append(
      f'no {serving.SERVING_DEFAULT} signature (has {", ".join(signatures)})'
    )
    return report
  if not records:
    report['problems'].append('no eval examples to send')
    return report
  regression = serving.task(model_dir) == trainer_options.REGRESSION
  problems_of = _regression_problems if regression else _problems_of
  output = serving.PREDICTION if regression else serving.PROBABILITIES
  answers = signatures[serving.SERVING_DEFAULT].structured_outputs
  user = serving.PROBABILITIES not in answers and serving.PREDICTION not in answers
  if user:  # a module file's model: its signatures that take serialized examples
    problems_of, output = _user_problems, sorted(answers)[0]
    signatures = {n: s for n, s in signatures.items() if _takes_examples(s)}
  reference = None
  for name in [serving.SERVING_DEFAULT] + sorted(set(signatures) - {serving.SERVING_DEFAULT}):
    signature = signatures[name]
    try:
      inputs = request(name, signature, records, model_dir)
      outputs = signature(**inputs)
    except Exception as error:  # a signature that cannot answer its own kind of request
      report['problems'].append(_failure(name, error))
      continue
    if name == serving.TRANSFORM and not user:  # TFMA's: one label per example
      labels = outputs.get(serving.EVAL_LABEL_KEY)
      if labels is None or labels.shape.rank < 1 or labels.shape[0] != len(records):
        report['problems'].append(f'{name}: not one {serving.EVAL_LABEL_KEY} per example')
    else:
      found = problems_of(name, outputs, len(records), reference)
      report['problems'] += found
      if name == serving.SERVING_DEFAULT:
        if found:
          return report  # nothing to compare the raw-input signatures with
        reference = outputs[output].numpy()
    times = _latency_ms(signature, inputs, requests)
    report['signatures'][name] = {
      'p50_ms': round(float(np.percentile(times, 50)), 3),
      'p99_ms': round(float(np.percentile(times, 99)), 3),
    }
  return report


def read_records(path: str) -> List[bytes]:
  return [record.numpy() for record in tf.data.TFRecordDataset(path)]


def project_modules() -> List[str]:
  """The project's modules this process has imported (the serving check's own: no model code)."""
  found = []
  for name, module in list(sys.modules.items()):
    path = getattr(module, '__file__', None) or ''
    if path.startswith(os.path.join(fingerprint.ROOT, name.split('.')[0])):
      found.append(name)
  return sorted(found)


def run(argv: List[str]) -> bool:
  """One check as its arguments say, its report written; whether the model was in S3."""
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--model', required=True, help='the SavedModel folder')
  parser.add_argument('--records', required=True, help='a TFRecord file of eval records')
  parser.add_argument('--report', required=True, help='where the JSON report goes')
  parser.add_argument('--requests', type=int, default=REQUESTS, help='timed requests per signature')
  args = parser.parse_args(argv)
  s3 = args.model.startswith('s3://')
  if s3:
    from utils import object_storage  # noqa: F401  (registers s3:// with TensorFlow)
  report = check(args.model, read_records(args.records), args.requests)
  report['project_modules'] = project_modules()
  atomic.write(args.report, json.dumps(report, indent=2))
  return s3


def _exit_after_s3() -> None:
  """TensorFlow I/O's S3 client aborts the interpreter's teardown (docs/design/scaling.md)."""
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(0)


def serve() -> int:
  """`--serve`: TensorFlow is imported already; each line on stdin is a check (probe_process.ask:
  its arguments, working folder and TMPDIR), answered by one line on the original stdout
  (`{}`, or `{"error": …}`); ends when stdin closes. Ctrl-C is left to the launching process,
  which ends the worker; whatever else prints goes to stderr."""
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  answers = os.fdopen(os.dup(1), 'w')
  os.dup2(2, 1)
  while True:
    line = sys.stdin.readline()
    if not line.strip():
      return 0
    request = json.loads(line)
    os.chdir(request['cwd'])
    if request['tmpdir']:
      os.environ['TMPDIR'] = tempfile.tempdir = request['tmpdir']
    s3, answer = False, {}
    try:
      s3 = run(request['argv'])
    except (Exception, SystemExit) as error:  # a check that could not run: one line back
      answer = {'error': _failure('the check did not run', error)}
    answers.write(json.dumps(answer) + '\n')
    answers.flush()
    if s3:
      _exit_after_s3()


def main(argv: Optional[List[str]] = None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  if argv == ['--serve']:
    return serve()
  if run(argv):
    _exit_after_s3()
  return 0


if __name__ == '__main__':
  sys.exit(main())
