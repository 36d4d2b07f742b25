"""Per-example feature skew (`--id-column`): training and serving rows that share an id, compared
feature by feature with TFDV's feature skew detector (DetectFeatureSkewImpl, on Beam's in-process
runner). Training is the detector's base and serving its test side, passed in that order here
(TFX 1.16's ExampleDiff component hands its inputs over the other way round, so it is not used).
"""

from typing import List, Sequence

from google.protobuf import json_format

SAMPLE_PAIRS = 5


def detect(
  training: Sequence[bytes],
  serving: Sequence[bytes],
  ids: List[str],
  ignore: List[str],
  beam_args: Sequence[str] = (),
) -> dict:
  """{'features': {name: FeatureSkew as a dict}, 'match_stats': MatchStats as a dict,
  'sample_pairs': [SkewPair as a dict]} for serialized tf.Examples; on the DirectRunner in
  this process unless `beam_args` name another runner."""
  import glob
  import json
  import os
  import tempfile

  import apache_beam as beam
  import tensorflow as tf
  from tensorflow_data_validation.skew import feature_skew_detector as detector

  keys = {
    'features': detector.SKEW_RESULTS_KEY,
    'match_stats': detector.MATCH_STATS_KEY,
    'sample_pairs': detector.SKEW_PAIRS_KEY,
  }
  parse = tf.train.Example.FromString
  found = {}
  with tempfile.TemporaryDirectory(prefix='feature-skew-') as folder:
    from apache_beam.options.pipeline_options import PipelineOptions

    options = PipelineOptions(list(beam_args) or ['--runner=DirectRunner'])
    with beam.Pipeline(options=options) as pipeline:
      base = pipeline | 'Training' >> beam.Create([parse(r) for r in training])
      test = pipeline | 'Serving' >> beam.Create([parse(r) for r in serving])
      results = (base, test) | 'Skew' >> detector.DetectFeatureSkewImpl(
        ids, features_to_ignore=ignore, sample_size=SAMPLE_PAIRS
      )
      for name, key in keys.items():
        _ = (
          results[key]
          | f'Json{name}' >> beam.Map(lambda proto: json.dumps(json_format.MessageToDict(proto)))
          | f'Write{name}' >> beam.io.WriteToText(os.path.join(folder, name))
        )
    for name in keys:
      found[name] = [
        json.loads(line)
        for path in sorted(glob.glob(os.path.join(folder, name + '*')))
        for line in open(path)
        if line.strip()
      ]
  return {
    'features': {f['featureName']: f for f in found['features']},
    'match_stats': found['match_stats'][0] if found['match_stats'] else {},
    'sample_pairs': found['sample_pairs'],
  }
