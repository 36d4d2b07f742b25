"""`pipeline.py monitor`: serving data against the serving model's own training data."""
