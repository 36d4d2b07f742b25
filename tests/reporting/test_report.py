"""The run report (cli/report.py), rendered by headless Chromium from a real pipeline run.

A full-page screenshot is written for humans to test-artifacts/report.png (TEST_ARTIFACTS
changes the folder).
"""

import os

import pytest

from reporting import report
from tests.support import browser

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)

HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.environ.get('TEST_ARTIFACTS', os.path.join(HERE, '..', '..', 'test-artifacts'))
PAGE_FACTS = """({
  sections: [...document.querySelectorAll('section')].map(s => ({
      id: s.id, heading: s.querySelector('h2').textContent, text: s.innerText})),
  charts: [...document.querySelectorAll('svg.chart')].map(c => ({
      alt: c.getAttribute('aria-label'), width: c.getBoundingClientRect().width,
      height: c.getBoundingClientRect().height, section: c.closest('section').id,
      texts: c.querySelectorAll('text').length,
      images: [...c.querySelectorAll('image')].map(i => i.getAttribute('xlink:href').slice(0, 22))})),
  img: [...document.images].filter(i => !i.closest('#duplicates')).length,
  thumbnails: document.querySelectorAll('#duplicates img').length,
  absent: [...document.querySelectorAll('.absent')].map(e => e.textContent),
})"""


@pytest.fixture(scope='module')
def rendered(first_run):
  chromium, why_not = browser.chromium_path()
  if chromium is None:
    pytest.skip(why_not)
  code, result, output, _ = first_run
  assert code == 0, result.get('error')
  path = os.path.join(output, report.REPORT_FILE)
  os.makedirs(ARTIFACTS, exist_ok=True)
  with browser.Page(chromium) as page:
    page.open('file://' + os.path.abspath(path))
    facts = page.evaluate(PAGE_FACTS)
    facts['requested'] = page.requested_urls()
    page.screenshot(os.path.join(ARTIFACTS, 'report.png'))
  return facts, result, path


def test_the_run_summary_names_the_report(first_run):
  _, result, output, _ = first_run
  assert result['report'] == os.path.join(output, report.REPORT_FILE)


def test_every_section_is_rendered_with_content(rendered):
  facts, _, _ = rendered
  assert [(s['id'], s['heading']) for s in facts['sections']] == list(report.SECTIONS)
  assert facts['absent'] == []  # no section says "the run stopped before this"
  assert all(len(s['text']) > len(s['heading']) + 20 for s in facts['sections']), facts['sections']


def test_each_chart_is_drawn_inline_with_a_real_size_and_its_text_as_text(rendered):
  facts, result, _ = rendered
  assert facts['img'] == 0  # charts are inline SVG, not <img>
  assert facts['thumbnails'] >= 2  # the Duplicates section's: first_run files an image twice
  charts = {i['section']: i for i in facts['charts']}
  assert set(charts) == {'examples', 'training', 'evaluation'}
  by_alt = {i['alt']: i['section'] for i in facts['charts']}
  assert by_alt == {
    'label distribution (label_name)': 'examples',
    'sample images per class': 'examples',
    'training curves': 'training',
    'recall per class': 'evaluation',
    'confusion matrix': 'evaluation',
    **({'misclassified eval images': 'evaluation'} if result['eval_accuracy'] < 1 else {}),
  }
  for chart in facts['charts']:
    assert chart['width'] > 200 and chart['height'] > 100, chart
    assert all(i == 'data:image/png;base64,' for i in chart['images']), chart  # embedded
    if chart['alt'] in ('sample images per class', 'misclassified eval images'):
      assert chart['images'], chart
      assert chart['texts'] >= len(chart['images']) + 1, chart  # a title and a caption per image
    else:
      assert chart['texts'] > 3, chart  # axis labels and ticks as text


def test_the_page_fetches_nothing_but_itself(rendered):
  facts, _, path = rendered
  fetched = [u for u in facts['requested'] if not u.startswith('data:')]
  assert fetched == ['file://' + os.path.abspath(path)]


def test_the_sections_show_this_runs_figures(rendered):
  facts, result, _ = rendered
  text = {s['id']: s['text'] for s in facts['sections']}
  assert all(f'{n:,}' in text['examples'] for n in result['examples_per_split'].values())
  assert '3/broken.jpg' in text['excluded'] and '1/notes.txt' in text['excluded']
  assert 'None: every split matches the schema' in text['anomalies']
  assert (
    'sparse_categorical_accuracy' in text['training'] and 'tensorboard --logdir' in text['training']
  )
  assert f'{result["eval_accuracy"]:.4g}' in text['evaluation'] and 'Blessed' in text['evaluation']
  assert 'Per class' in text['evaluation'] and 'Confusion matrix' in text['evaluation']
  served = result['serving_check']
  assert f'It serves: loaded in {served["load_seconds"]:.2f} s' in text['evaluation']
  p50 = served['signatures']['predict_image_bytes']['p50_ms']
  assert f'predict_image_bytes\t{p50:,.4g}' in text['evaluation']
  recall_of_0 = result['class_recall']['0']
  assert f'0\t{recall_of_0:,.4g}' in text['evaluation']  # class 0's row: its recall
  assert 'examples/s' in text['input'] and 'training step' in text['input']
  assert result['pushed_to'] in text['lineage'] and 'model #' in text['lineage']
  assert 'label_name' in text['features'] and 'image_id' in text['features']


def test_a_warm_process_draws_the_data_sections_again_only_for_other_statistics(
  tmp_path, monkeypatch
):
  import config as cfg
  from metadata import report_facts
  from metadata.run_result import RunResult
  from reporting import report_data

  drawn = []
  monkeypatch.setattr(
    report_data, 'features_section', lambda statistics, histograms: drawn.append(1) or '<p>f</p>'
  )
  config = cfg.PipelineConfig(data=str(tmp_path / 'a.csv'), data_kind=cfg.CSV, output=str(tmp_path))
  empty = report_facts.gather({}, RunResult(wall_seconds=1.0), str(tmp_path / 'm.sqlite'), 'y')
  for uri in ('/pipeline/StatisticsGen/statistics/7', '/pipeline/StatisticsGen/statistics/9'):
    facts = empty._replace(statistics=empty.statistics._replace(uri=uri))
    pages = [report.render(facts, config) for _ in range(2)]  # a model edit's run: the same
    assert '<p>f</p>' in pages[1]
  assert len(drawn) == 2  # once per statistics artifact


def test_the_kept_reports_beyond_keep_reports_are_removed_oldest_first(tmp_path):
  for age, name in enumerate(['c.html', 'b.html', 'a.html', 'notes.txt']):
    path = tmp_path / name
    path.write_text(name)
    os.utime(path, (1000 + age, 1000 + age))
  report.prune(str(tmp_path), 0)  # 0: every report kept
  assert len(os.listdir(tmp_path)) == 4
  report.prune(str(tmp_path), 2)
  assert sorted(os.listdir(tmp_path)) == ['a.html', 'b.html', 'notes.txt']
