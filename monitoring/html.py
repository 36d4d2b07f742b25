"""The monitoring run's HTML page: a table of every compared feature, and per flagged feature a
chart that overlays its training and serving distributions (the quantile histograms the
Jensen-Shannon divergence reads, as densities; the top values' shares for L-infinity). Charts are
drawn with matplotlib and the page is made as the run report's (reporting/pictures.py,
reporting/html.py)."""

from typing import Optional

from metadata import artifact_reader
from reporting import html, pictures

MAX_VALUES = 12  # categorical values drawn per chart
_STYLE = html.STYLE + '.flagged{color:#b00020}\n'


def _quantiles(feature):
  for histogram in feature.num_stats.histograms:
    if histogram.type == histogram.QUANTILES and histogram.buckets:
      return histogram.buckets
  return []


def overlay(name: str, training, serving) -> Optional[object]:
  """One feature's training and serving distributions in one chart, or None."""
  figure, axes = pictures.new_figure(f'{name}: training and serving', (6, 2.6))
  axis = axes[0][0]
  if training.HasField('num_stats') and serving.HasField('num_stats'):
    for feature, label, colour in (
      (training, 'training', '#1f77b4'),
      (serving, 'serving', '#d62728'),
    ):
      buckets = _quantiles(feature)
      if not buckets:
        return None
      total = sum(b.sample_count for b in buckets) or 1
      for b in buckets:  # density: equal-mass buckets differ in width
        width = max(b.high_value - b.low_value, 1e-9)
        axis.bar(
          b.low_value,
          b.sample_count / total / width,
          width=width,
          align='edge',
          color=colour,
          alpha=0.45,
          label=label if b is buckets[0] else None,
        )
    axis.set_ylabel('density', fontsize=8)
  else:
    shares = []
    for feature in (training, serving):
      counts = {v.value: v.frequency for v in feature.string_stats.top_values}
      total = sum(counts.values()) or 1
      shares.append({k: c / total for k, c in counts.items()})
    values = sorted(set(shares[0]) | set(shares[1]), key=lambda v: -shares[0].get(v, 0))[
      :MAX_VALUES
    ]
    if not values:
      return None
    positions = range(len(values))
    axis.bar(
      [p - 0.2 for p in positions], [shares[0].get(v, 0) for v in values], 0.4, label='training'
    )
    axis.bar(
      [p + 0.2 for p in positions], [shares[1].get(v, 0) for v in values], 0.4, label='serving'
    )
    axis.set_xticks(list(positions), [pictures.short(v) for v in values], rotation=30, ha='right')
    axis.set_ylabel('share', fontsize=8)
  axis.set_title(name, fontsize=9)
  axis.tick_params(labelsize=7)
  axis.legend(fontsize=7)
  figure.tight_layout()
  return figure


def _performance(entry: Optional[dict]) -> str:
  """The model's error on the served rows that carry the label, beside its eval figures."""
  if not entry:
    return ''
  names = sorted(entry['figures'])
  rows = ''.join(
    f'<tr><td>{html.escape(name)}</td><td>{entry["figures"][name]:.4g}</td>'
    f'<td>{entry["eval_figures"].get(name, float("nan")):.4g}</td></tr>'
    for name in names
  )
  flagged = ' class="flagged"' if entry['flagged'] else ''
  return (
    f"<h3>The model's error on labelled rows</h3><p{flagged}>{html.escape(entry['why'])}</p>"
    f'<table><tr><th>figure</th><th>served rows</th><th>eval split</th></tr>{rows}</table>'
  )


def page(summary: dict, training_statistics, serving_statistics, others=None) -> str:
  """The whole page; section id="monitoring". `others`: {name: (training, serving) statistics}
  of what the two statistics do not hold (a regression model's label and prediction)."""
  from monitoring.distances import MEASURE_NAMES

  rows = []
  for name, f in summary['features'].items():
    drift = f.get('drift') or {}
    drifted = f'{drift["value"]:.4f}' + (' (flagged)' if drift['flagged'] else '') if drift else '-'
    rows.append(
      f'<tr class="{"flagged" if name in summary["flagged"] else ""}"><td>{html.escape(name)}</td>'
      f'<td>{MEASURE_NAMES[f["measure"]]}</td><td>{f["value"]:.4f}</td><td>{f["threshold"]:g}</td>'
      f'<td>{"yes" if f["flagged"] else "no"}</td><td>{drifted}</td></tr>'
    )
  charts = []
  training, serving = (
    artifact_reader.features_by_name(statistics.datasets[0])
    for statistics in (training_statistics, serving_statistics)
  )
  for name, (trained, served) in (others or {}).items():
    training[name], serving[name] = (
      artifact_reader.features_by_name(statistics.datasets[0])[name]
      for statistics in (trained, served)
    )
  for name in summary['flagged']:
    if name in training and name in serving:
      figure = overlay(name, training[name], serving[name])
      if figure is not None:
        charts.append(f'<h3>{html.escape(name)}</h3>{html.chart(figure)}')
  anomalies = ''.join(
    f'<li>{html.escape(name)}: {html.escape("; ".join(found))}</li>'
    for name, found in summary['anomalies'].items()
  )
  model = summary['model']
  served = f'model #{model["model_id"]} ({html.escape(model["pushed_to"])})'
  return (
    f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>monitoring</title>'
    f'<style>{_STYLE}</style></head><body><section id="monitoring"><h2>Serving data against '
    f'training data</h2><p>{summary["serving_examples"]} serving examples from '
    f'{html.escape(summary["serving_data"])}; {served}; '
    f'{len(summary["flagged"])} flagged.</p><table><tr><th>feature</th><th>measure</th>'
    f'<th>skew</th><th>threshold</th><th>flagged</th><th>drift</th></tr>{"".join(rows)}</table>'
    + (f'<h3>Serving anomalies</h3><ul>{anomalies}</ul>' if anomalies else '')
    + _performance(summary.get('performance'))
    + ''.join(charts)
    + '</section></body></html>\n'
  )
