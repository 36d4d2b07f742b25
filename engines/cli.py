"""The command line every engine cluster shares: `python -m engines.flink|spark|flink_containers
up|down|status|…`, each module giving its own actions; an EngineError is one `error:` line,
exit 2."""

import argparse
import signal
import sys
from typing import Callable, Dict, List, Optional

from engines import common

Action = Callable[[argparse.Namespace], None]


class UsageError(Exception):
  """A command given without what it needs: argparse's usage line and error, exit 2."""


def main(
  prog: str,
  description: str,
  up: Action,
  down: Callable[[], list],
  status: Callable[[], str],
  argv: Optional[List[str]] = None,
  more: Optional[Dict[str, Action]] = None,
  arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> int:
  """`up` starts the cluster, `down` stops it and returns what is left (exit 1 when anything is),
  `status` is the line(s) printed; `more` the cluster's other commands, `arguments` its flags."""
  signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `status | head` ends quietly, as Unix tools do
  more = more or {}
  parser = argparse.ArgumentParser(prog=prog, description=description)
  parser.add_argument('command', choices=('up', 'down', 'status', *more))
  arguments(parser)
  args = parser.parse_args(argv)
  try:
    if args.command == 'up':
      up(args)
    elif args.command == 'down':
      return 1 if down() else 0
    elif args.command == 'status':
      print(status())
    else:
      more[args.command](args)
  except UsageError as e:
    parser.error(str(e))
  except common.EngineError as e:
    print(f'error: {e}', file=sys.stderr)
    return 2
  return 0
