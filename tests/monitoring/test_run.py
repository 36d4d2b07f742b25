"""monitoring/run.py's terminal lines."""

from monitoring import run


def test_a_csv_s_skipped_headers_and_inf_cells_are_a_line_before_the_run_s():
  summary = {
    'flagged': [],
    'features': {},
    'anomalies': {},
    'serving_examples': 22,
    'model': {'model_id': 5},
    'output': '/out',
  }
  assert len(run.lines(summary)) == 1  # a summary without the counts (an older run's) too
  summary.update(repeated_headers=1, non_finite_cells=4)
  lines = run.lines(summary)
  assert (
    lines[0] == 'CSV rows: 1 repeated header line(s) skipped, 4 inf/nan cell(s) read as missing'
  )
  assert lines[1].startswith('monitor: 22 serving examples')
