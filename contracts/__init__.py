"""What several parts of the project agree on: record layouts, artifact file names, splits,
errors, names and limits (layouts and names only; shared utilities are in utils/, the TensorFlow
codecs of the record layouts in records/; TensorFlow is imported inside functions only).

Imported by components, the Trainer, the commands and the ML Metadata readers; imports no other
module of the project (docs/architecture.md; tests/test_architecture.py keeps both true).
"""
