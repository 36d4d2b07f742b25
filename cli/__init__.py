"""Helpers of the `pipeline.py` command line: input checks, progress, final summary."""
