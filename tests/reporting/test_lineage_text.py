"""reporting/lineage_text: `pipeline.py lineage`'s lines from a traced report."""

from reporting import lineage_text


def _report(commit: str, blessed: bool, flagged: list) -> dict:
  return {
    'data_versions': [
      {
        'examples_id': 3,
        'created': 'then',
        'span': 2,
        'version': None,
        'split_counts': {'train': 8, 'eval': 2},
        'input_base': '/data/images',
        'source': '/data/images',
        'fingerprint': 'f' * 80,
        'revision': {'data_git_commit': commit, 'data_rev': 'v1'},
      }
    ],
    'models': [
      {
        'model_id': 7,
        'created': 'later',
        'trained_on': 3,
        'evaluations': [
          {
            'role': 'candidate',
            'evaluated_on': 3,
            'accuracy': 0.875,
            'blessed': blessed,
            'against': None,
            'against_blessed': None,
          }
        ],
        'pushed_to': ['/out/serving/1'] if blessed else [],
      }
    ],
    'monitoring': [
      {
        'execution_id': 9,
        'created': 'now',
        'model_id': 7,
        'serving_data': '/logs',
        'flagged': flagged,
        'summary': f'{len(flagged)} flagged',
      }
    ],
  }


def test_each_data_version_model_and_monitoring_run_is_one_line():
  commit = '0123456789abcdef'
  lines = lineage_text.render(_report(commit, blessed=True, flagged=['height']))
  assert lines[0] == 'data versions:' and lines[2] == 'models:'
  assert 'examples #3' in lines[1] and 'span 2 version -' in lines[1]
  assert 'train 8, eval 2' in lines[1] and f'git {commit[:12]} (v1)' in lines[1]
  assert 'fingerprint ' + 'f' * 60 + '  ' in lines[1]  # the fingerprint cut to 60 characters
  assert 'evaluated on #3: accuracy 0.8750, blessed; pushed to /out/serving/1' in lines[3]
  assert lines[4] == 'monitoring runs (pipeline.py monitor):'
  assert 'flagged height' in lines[5]


def test_a_model_never_blessed_and_a_quiet_monitoring_run():
  lines = lineage_text.render(_report('abc', blessed=False, flagged=[]))
  assert 'accuracy 0.8750, not blessed; pushed to nowhere' in lines[3]
  assert 'nothing flagged' in lines[5]
