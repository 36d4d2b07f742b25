"""Turns TFX's log lines into one progress line per component; the full log goes to a file."""
import logging
import sys
import time
import warnings


class ComponentProgress(logging.Handler):
  """Prints `[i/n] Component ... done in 3.1 s (cached)` as LocalDagRunner walks the DAG."""

  def __init__(self, node_ids, stream=sys.stdout):
    super().__init__(level=logging.INFO)
    self._order = {node_id: i + 1 for i, node_id in enumerate(node_ids)}
    self._stream = stream
    self._started = {}
    self._cached = set()
    self._current = None

  def emit(self, record: logging.LogRecord) -> None:
    if record.msg == 'Component %s is running.':
      self._current = record.args[0]
      self._started[self._current] = time.monotonic()
      self._print(f'{self._tag(self._current)} {self._current} running…')
    elif record.msg == 'A cached execution %d is used.' and self._current:
      self._cached.add(self._current)
    elif record.msg == 'Component %s is finished.':
      node = record.args[0]
      took = time.monotonic() - self._started.get(node, time.monotonic())
      how = 'cached' if node in self._cached else 'executed'
      self._print(f'{self._tag(node)} {node} done in {took:.1f} s ({how})')

  def _tag(self, node_id: str) -> str:
    return f'[{self._order.get(node_id, "?")}/{len(self._order)}]'

  def _print(self, line: str) -> None:
    self._stream.write(line + '\n')
    self._stream.flush()


def route_logs(log_path: str, progress: ComponentProgress) -> None:
  """Everything at INFO and above to `log_path`; only progress lines to the terminal."""
  root = logging.getLogger()
  for handler in list(root.handlers):
    root.removeHandler(handler)
    if isinstance(handler, (logging.FileHandler, ComponentProgress)):
      handler.close()  # ours, from an earlier run in this process
  file_handler = logging.FileHandler(log_path)
  file_handler.setFormatter(logging.Formatter('%(asctime)s %(levelname)s %(name)s: %(message)s'))
  root.addHandler(file_handler)
  root.addHandler(progress)
  root.setLevel(logging.INFO)
  tf_logger = logging.getLogger('tensorflow')  # TensorFlow adds its own stderr handler
  for handler in list(tf_logger.handlers):
    tf_logger.removeHandler(handler)
  tf_logger.propagate = True
  logging.captureWarnings(True)
  warnings.simplefilter('default')
  try:
    from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
    absl_logging.use_python_logging(quiet=True)
    absl_logging.set_verbosity(absl_logging.INFO)
  except ImportError:
    pass
