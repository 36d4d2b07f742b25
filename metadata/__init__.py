"""Readers of a run's ML Metadata (SQLite): the summary, lineage, the HTML run report, and the
recovery of interrupted executions."""
