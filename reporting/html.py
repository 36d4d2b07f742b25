"""The HTML every page of the project is made of (the run report, `pipeline.py compare --html`,
the monitoring page): one style, escaping, tables, charts and the note of a missing section.

Charts are matplotlib figures embedded as inline SVG whose text stays text (svg.fonttype
'none'): the browser draws class names with its own fonts, which have the glyphs matplotlib's
DejaVu Sans lacks (CJK and others). Pages have no scripts, fonts or links to fetch, so they open
offline and can be mailed.
"""

import html
import io
import statistics as stats
from typing import List, Sequence

STYLE = """
body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em} td,th{border:1px solid #ddd;padding:.2em .5em}
th{background:#f4f4f4;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
.absent{color:#777;font-style:italic} .bad{color:#b00020} .good{color:#1b7a1b}
nav a{margin-right:1em} svg.chart{max-width:100%;height:auto;border:1px solid #eee}
code{background:#f4f4f4;padding:0 .2em}
"""
# Text as SVG <text> in the page's font (DejaVu Sans first, as matplotlib measured it, then any
# sans-serif); no metadata (a date would make every page differ).
_SVG_SETTINGS = {'svg.fonttype': 'none', 'font.sans-serif': ['DejaVu Sans']}
_SVG_METADATA = {'Creator': None, 'Date': None, 'Format': None, 'Type': None}


def escape(value) -> str:
  """Any value as HTML text."""
  return html.escape(str(value))


def number_text(value) -> str:
  """A number for a table cell: 4 significant digits (whole from 1e4, never 2.3e+04), thousands
  separated."""
  if isinstance(value, float):
    return f'{value:,.4g}' if abs(value) < 1e4 else f'{value:,.0f}'
  return f'{value:,}' if isinstance(value, int) else escape(value)


def table(header: Sequence[str], rows: List[Sequence]) -> str:
  """A <table>: numbers right-aligned (class "n"), None as '–'."""
  head = ''.join(f'<th>{escape(h)}</th>' for h in header)
  body = ''.join(
    '<tr>'
    + ''.join(
      f'<td class="n">{number_text(c)}</td>'
      if isinstance(c, (int, float)) and not isinstance(c, bool)
      else f'<td>{escape("–" if c is None else c)}</td>'
      for c in row
    )
    + '</tr>'
    for row in rows
  )
  return f'<table><tr>{head}</tr>{body}</table>'


def absent(what: str) -> str:
  """The note in place of a section whose artifacts are not there."""
  return f'<p class="absent">{escape(what)}</p>'


def chart(figure) -> str:
  """The figure as an inline <svg> in a <p> (class "chart", its label as aria-label); images in
  it (the sample grids, a heat map) are embedded PNGs."""
  import matplotlib

  buffer = io.StringIO()
  with matplotlib.rc_context(_SVG_SETTINGS):
    figure.savefig(buffer, format='svg', dpi=100, bbox_inches='tight', metadata=_SVG_METADATA)
  drawn = buffer.getvalue()
  drawn = drawn[drawn.index('<svg') :]  # no XML declaration or DOCTYPE inside HTML
  label = escape(figure.get_label())
  return (
    '<p>'
    + drawn.replace('<svg ', f'<svg class="chart" role="img" aria-label="{label}" ', 1)
    + '</p>'
  )


def page(title: str, body: str) -> str:
  """A whole page in STYLE: the title as <title> and <h1>, then body."""
  return (
    f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}'
    f'</title><style>{STYLE}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>'
  )


def _range_text(values: Sequence[float], what: str) -> str:
  """'recall 0.91–1, median 0.97' of the numbers in values (None left out)."""
  found = [v for v in values if v is not None]
  if not found:
    return f'no {what}'
  low, high, median = (number_text(measure(found)) for measure in (min, max, stats.median))
  return f'{what} {low}–{high}, median {median}'


def left_out_line(shown: int, total: int, values: Sequence[float], what: str) -> str:
  """The line under a chart that shows `shown` of `total` classes; values: those left out."""
  if shown >= total:
    return ''
  unmeasured = sum(v is None for v in values)
  without = f'; {unmeasured} without eval examples' if unmeasured else ''
  return (
    f'<p>… and {total - shown:,} more classes: {escape(_range_text(values, what))}{without} '
    '(every class in the table below).</p>'
  )
