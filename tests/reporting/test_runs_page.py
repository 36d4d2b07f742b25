"""reporting/runs_page.py: the runs page from hand-made facts (in Chromium with a real output:
tests/e2e/test_runs.py)."""

import re

from reporting import runs_page
from tests.support import run_history


def test_one_chart_per_task_and_one_point_per_run_of_it():
  runs = [run_history.run(n) for n in (1, 3, 5)]
  runs.insert(1, run_history.run(2, **run_history.REFUSED))
  runs.append(run_history.run(6, task='regression', model='mlp', accuracy=None, mae=2.0))
  page = runs_page.render(run_history.history(*runs))
  assert page.count('<svg class="chart"') == 2
  points = re.findall(r'<g id="run-(\d+)"', page)
  assert sorted(points, key=int) == ['1', '2', '3', '4', '5']


def test_each_row_links_its_kept_report_and_says_how_to_compare_it_with_the_one_before():
  first, missing = run_history.run(1), run_history.run(2, report=None)
  page = runs_page.render(run_history.history(first, missing))
  assert '<a href="reports/2026-12-07T18-01-00.000000.html">' in page
  assert page.count('<a href=') == 1  # a run without a kept report: its id, no link
  assert (
    f'pipeline.py compare {first["run_id"]} {missing["run_id"]} --output /out --html '
    '/out/compare-2026-12-07T18-01-00.000000-2026-12-07T18-02-00.000000.html'
  ) in page


def test_the_page_fetches_nothing():
  page = runs_page.render(run_history.history(run_history.run(1)))
  assert '<script' not in page and '<link' not in page and 'src=' not in page
  assert not re.search(r'href="(https?:)?//', page)


def test_it_is_written_as_runs_html_of_the_output(tmp_path):
  facts = dict(run_history.history(run_history.run(1)), output=str(tmp_path))
  assert runs_page.write(facts) == str(tmp_path / runs_page.RUNS_PAGE)
  assert (tmp_path / runs_page.RUNS_PAGE).read_text().startswith('<!DOCTYPE html>')
