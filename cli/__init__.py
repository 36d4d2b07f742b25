"""The `pipeline.py` commands, one module each, and what they share: the flags, the typed
configuration they build, the output folder and its lock, progress lines; `inputs/` says what
`--data` is."""
