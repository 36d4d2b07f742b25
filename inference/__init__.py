"""After the push: `pipeline.py predict` (batch prediction with a pushed model through its
raw-input signatures, on Beam) and its request logs (contracts/request_log.py)."""
