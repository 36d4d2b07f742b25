"""Work in a thread for as long as a `with` block runs."""

import threading

from utils import background


class _Ticks(background.Background):
  def __init__(self):
    super().__init__()
    self.started, self.ticks = threading.Event(), 0

  def _run(self) -> None:
    self.started.set()
    while not self._stop.wait(0.001):
      self.ticks += 1


def test_the_work_runs_from_entry_and_has_ended_at_exit():
  with _Ticks() as ticks:
    assert ticks.started.wait(10)
  assert not ticks._thread.is_alive()
  after = ticks.ticks
  assert ticks._stop.is_set() and ticks.ticks == after
