"""Work in a thread for as long as a `with` block runs."""

import threading


class Background:
  """`with` it: `_run` works in a daemon thread from the block's entry until its exit sets
  `_stop` and waits for the thread to end."""

  def __init__(self):
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._run, daemon=True)

  def __enter__(self):
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._stop.set()
    self._thread.join()
    return False

  def _run(self) -> None:
    raise NotImplementedError
