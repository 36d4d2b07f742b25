"""Readers of a run's ML Metadata (SQLite): the summary, lineage, the HTML run report, the splits
and counts `verify` checks, and the recovery of interrupted executions; `connection` opens the
store for all of them."""
