"""Benchmarks as their tests run them: once, through their command line, figures read back."""

import json


def figures(main, folder, *flags) -> dict:
  """The figures that a benchmark's `main(flags)` writes with --json into `folder`."""
  path = folder / 'figures.json'
  main([*flags, '--json', str(path)])
  with open(path) as f:
    return json.load(f)
