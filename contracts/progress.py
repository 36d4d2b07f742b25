"""Progress of long work inside a component, as log records on one logger: the run's terminal
shows them (cli/progress.py: one line redrawn on a terminal; when output is not one, a plain
line every PLAIN_SECONDS and the last one), and the run log keeps every record."""

import logging
import os

LOGGER = 'tfrp.progress'
FINAL = 'progress_final'  # a record's attribute: the work is done (always shown)
# Seconds between plain progress lines when output is not a terminal (logs, CI, a pipe).
PLAIN_SECONDS = float(os.environ.get('TFRP_PROGRESS_SECONDS', '10'))


def report(node: str, text: str, final: bool = False) -> None:
  """`node: text` on the progress logger (node: the component's id, e.g. 'Trainer')."""
  logging.getLogger(LOGGER).info('%s: %s', node, text, extra={FINAL: final})
