"""Which snapshot of the data a run read (git, DVC, lakeFS), recorded in ML Metadata."""
