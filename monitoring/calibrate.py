"""Measures what the default thresholds are set against (docs/monitoring.md), on a run's serving
model: the eval split (label left out) against the training statistics is sampling noise; the
same rows with one numeric column shifted by +3 standard deviations, or 20 % of the rows of one
categorical column moved to its second value, are skew. Prints one line per feature.

  .venv/bin/python -m monitoring.calibrate OUTPUT_FOLDER
"""

import collections
import glob
import os
import sys


def _values(example, name):
  feature = example.features.feature[name]
  kind = feature.WhichOneof('kind')
  return getattr(feature, kind).value if kind else []


def main(output: str) -> None:
  import numpy as np
  import tensorflow as tf
  import tensorflow_data_validation as tfdv

  from metadata import artifact_reader, lineage
  from monitoring import distances, images

  model = lineage.serving_model(os.path.join(output, 'metadata.sqlite'))
  schema = tfdv.load_schema_text(os.path.join(model['schema_uri'], 'schema.pbtxt'))
  training = artifact_reader.train_statistics(model['statistics_uri'])
  schema = distances.monitoring_schema(schema, training, model['label'], {})
  shards = sorted(glob.glob(os.path.join(glob.escape(model['examples_uri']), 'Split-eval', '*')))
  rows = [tf.train.Example.FromString(r) for r in images.read_records(shards)]

  def measured(examples):
    serving = distances.statistics(
      [e.SerializeToString() for e in examples], schema, [model['label']]
    )
    return distances.compare(training, serving, schema)['features']

  noise = measured(rows)
  print(f'{len(rows)} eval rows against the training statistics; feature: measure, noise, skewed')
  for name, entry in noise.items():
    changed = [type(e)() for e in rows]
    for copy, row in zip(changed, rows):
      copy.CopyFrom(row)
    if entry['measure'] == distances.JSD:
      values = np.array([v for e in rows for v in _values(e, name)], float)
      shift = 3 * values.std()
      for e in changed:
        feature = e.features.feature[name]
        kind = feature.WhichOneof('kind')
        if kind == 'float_list':
          feature.float_list.value[:] = [v + shift for v in feature.float_list.value]
        elif kind == 'int64_list':
          feature.int64_list.value[:] = [int(v + shift) for v in feature.int64_list.value]
      change = '+3 sd'
    else:
      counts = collections.Counter(v for e in rows for v in _values(e, name))
      if len(counts) < 2:
        continue
      (first, _), (second, _) = counts.most_common(2)
      todo = len(rows) // 5
      for e in changed:
        values = e.features.feature[name].bytes_list.value
        if todo and list(values) == [first]:
          values[:] = [second]
          todo -= 1
      change = '20 % moved'
    skewed = measured(changed)[name]['value']
    print(f'{name}: {entry["measure"]}, noise {entry["value"]:.3f}, {change} {skewed:.3f}')


if __name__ == '__main__':
  main(sys.argv[1])
