"""What every benchmark does with its figures besides printing them, and the command line that
says where they go."""

import argparse
import json
import os
import subprocess
import time
from typing import Callable, List, Optional, Tuple


def ratio_rounds(numerators: List[float], denominators: List[float]) -> List[float]:
  """[lowest, highest] of a ratio taken round by round: its two terms were measured in the same
  round, so a slow stretch of the machine moves both (every benchmark reports this spread)."""
  ratios = [a / b for a, b in zip(numerators, denominators)]
  return [min(ratios), max(ratios)]


def parser(doc: str, quick: Optional[str] = None, prog: Optional[str] = None):
  """A benchmark's argparse parser: its docstring as the help, --quick (`quick` says what it
  makes smaller) where given, and --json for save()."""
  made = argparse.ArgumentParser(
    prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  if quick:
    made.add_argument('--quick', action='store_true', help=quick)
  made.add_argument('--json', help='also write the figures here')
  return made


def main_in_rounds(
  doc: str,
  quick: str,
  measure: Callable[[bool, int], dict],
  report: Callable[[dict], None],
  argv: Optional[List[str]] = None,
) -> None:
  """A benchmark measured in rounds: `measure(quick, rounds)`, the figures printed by `report`
  and saved (--json); --rounds 0 is the benchmark's own default."""
  made = parser(doc, quick=quick)
  made.add_argument('--rounds', type=int, default=0, help='rounds (default 2, quick: 1)')
  args = made.parse_args(argv)
  figures = measure(args.quick, args.rounds)
  report(figures)
  save(figures, args.json)


def keyed(figures: dict, pattern: str = '{}_{}') -> dict:
  """{(kind, size): value} as JSON takes it: each key tuple formatted into `pattern`."""
  return {pattern.format(*key): value for key, value in figures.items()}


def save(figures: dict, path: Optional[str]) -> None:
  """Writes the figures as JSON when a path was given (--json)."""
  if path:
    with open(path, 'w') as f:
      json.dump(figures, f, indent=2)


def measured_process(argv: List[str], cwd: str) -> Tuple[dict, float]:
  """Runs argv (a benchmark's child mode, printing one JSON line last) in a fresh process:
  (that JSON, the peak resident MB of the process and its children, sampled every 50 ms)."""
  import psutil

  child = subprocess.Popen(
    argv,
    cwd=cwd,
    stdout=subprocess.PIPE,
    stderr=subprocess.DEVNULL,
    text=True,
    env=dict(os.environ, PYTHONPATH=cwd),
  )
  process, peak = psutil.Process(child.pid), 0
  while child.poll() is None:
    try:
      tree = [process] + process.children(recursive=True)
      peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
    except psutil.Error:
      pass
    time.sleep(0.05)
  output = child.stdout.read()
  if child.returncode != 0:
    raise RuntimeError(f'{" ".join(argv[1:4])} failed ({child.returncode})')
  return json.loads(output.strip().splitlines()[-1]), peak / 1e6
