"""reporting/report.py's Transform section (reporting/report_data.transform_section): drawn for a
run with a Transform node (TFX's taxi pipeline, tests/support/taxi_module_run.py), absent
otherwise."""

import re

import pytest

import config as cfg
from metadata import report_facts, run_reader, summary
from reporting import report

pytestmark = pytest.mark.slow  # TFX's taxi pipeline runs once (tests/conftest.py)


def _facts(taxi_module_run):
  store = run_reader.open_store(taxi_module_run.metadata)
  (run,) = run_reader.pipeline_runs(store, 'chicago_taxi_native_keras')
  nodes = run_reader.run_nodes(store, run)
  return report_facts.gather(nodes, summary.build(nodes, 1.0), taxi_module_run.metadata, 'tips')


def _section(page: str, key: str) -> str:
  found = re.search(f'<section id="{key}">(.*?)</section>', page, re.S)
  return found.group(1) if found else ''


def test_a_module_file_runs_report_shows_what_transform_computed(taxi_module_run, tmp_path):
  facts = _facts(taxi_module_run)
  config = cfg.PipelineConfig(data=taxi_module_run.data, data_kind='csv', output=str(tmp_path))
  page = report.render(facts, config)
  section = _section(page, 'transform')
  assert '<a href="#transform">Transform</a>' in page
  assert page.index('<section id="transform">') < page.index('<section id="training">')
  assert 'Transform complete' in section and 'taxi_utils_native_keras' in section
  for vocabulary in facts.transform.vocabularies:
    assert f'<td>{vocabulary["name"]}</td><td class="n">{vocabulary["size"]}</td>' in section
  assert '<td>fare_xf</td><td>float</td>' in section
  assert 'through transform graph #' in _section(page, 'lineage')

  page = report.render(facts._replace(transform=None), config)
  assert '<section id="transform">' not in page and '#transform' not in page
