"""reporting/html.py, the toolkit of every page: escaping, table cells, the missing-section note and
the page around a body."""

from reporting import html


def test_a_table_right_aligns_numbers_escapes_text_and_shows_none_as_a_dash():
  found = html.table(['<name>', 'n'], [['a & b', 1234], [None, 0.123456], [True, 123456.7]])
  assert found == (
    '<table><tr><th>&lt;name&gt;</th><th>n</th></tr>'
    '<tr><td>a &amp; b</td><td class="n">1,234</td></tr>'
    '<tr><td>–</td><td class="n">0.1235</td></tr>'
    '<tr><td>True</td><td class="n">123,457</td></tr></table>'
  )


def test_a_missing_section_and_a_page_are_escaped():
  assert html.absent('No <statistics>') == '<p class="absent">No &lt;statistics&gt;</p>'
  page = html.page('run <1>', '<p>body</p>')
  assert page.startswith('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">')
  assert '<title>run &lt;1&gt;</title>' in page and f'<style>{html.STYLE}</style>' in page
  assert page.endswith('<h1>run &lt;1&gt;</h1><p>body</p></body></html>')
