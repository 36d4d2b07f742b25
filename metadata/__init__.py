"""Readers of a run's ML Metadata (SQLite): a run's nodes and result, lineage, the facts two runs
are compared on, the splits and counts `verify` checks, and the recovery of interrupted
executions; `connection` opens the store for all of them (reporting/ shows what they read)."""
