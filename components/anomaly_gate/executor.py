"""Reads ExampleValidator's output and stops the run, in plain words, when the data is wrong."""

from contracts.anomalies import AnomaliesFound, describe_anomalies


def check(anomalies_uri: str) -> None:
  """Raises AnomaliesFound listing every anomaly."""
  problems = describe_anomalies(anomalies_uri)
  if problems:
    raise AnomaliesFound(
      f'{len(problems)} data anomal{"y" if len(problems) == 1 else "ies"}, '
      'training stopped: ' + '; '.join(problems)
    )
