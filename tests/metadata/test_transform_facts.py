"""metadata/transform_facts.py: what a module file's Transform computed, gathered from TFX's taxi
pipeline's ML Metadata and artifacts (tests/support/taxi_module_run.py)."""

import pytest

from metadata import report_facts, run_reader, summary, transform_facts

pytestmark = pytest.mark.slow  # TFX's taxi pipeline runs once (tests/conftest.py)


def _nodes(taxi_module_run):
  store = run_reader.open_store(taxi_module_run.metadata)
  (run,) = run_reader.pipeline_runs(store, 'chicago_taxi_native_keras')
  return run_reader.run_nodes(store, run)


def test_the_transformed_features_vocabularies_and_raw_features_are_gathered(taxi_module_run):
  facts = transform_facts.gather(_nodes(taxi_module_run))
  assert facts.state == 'COMPLETE' and facts.seconds > 0
  assert facts.module.startswith('taxi_utils_native_keras (code ')
  features = {f['name']: f for f in facts.features}
  fare = features['fare_xf']  # tft.scale_to_z_score: its moments say the analyzer's work
  assert fare['type'] == 'float'
  assert abs(fare['mean']) < 0.1 and 0.8 < fare['std'] < 1.2
  # compute_and_apply_vocabulary with 10 OOV buckets: the schema's domain ends at size + 9
  sizes = sorted(v['size'] for v in facts.vocabularies)
  assert len(sizes) == 2 and min(sizes) > 0
  domains = sorted(
    int(features[name]['domain'].split('..')[1].split()[0])
    for name in ('company_xf', 'payment_type_xf')
  )
  assert domains == [size + 9 for size in sizes]
  raw = {f['name']: f['type'] for f in facts.raw}
  assert raw['tips'] == 'float' and raw['payment_type'] == 'bytes'


def test_the_report_has_transform_facts_only_for_a_run_with_a_transform_node(taxi_module_run):
  nodes = _nodes(taxi_module_run)
  result = summary.build(nodes, 1.0)
  facts = report_facts.gather(nodes, result, taxi_module_run.metadata, 'tips')
  assert facts.transform is not None and facts.transform.features
  without = {k: n for k, n in nodes.items() if k != transform_facts.TRANSFORM_NODE}
  assert report_facts.gather(without, result, taxi_module_run.metadata, 'tips').transform is None
