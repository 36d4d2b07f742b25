"""What several parts use that is not an agreement between them: write-then-rename (`atomic`),
code fingerprints for the cache key (`fingerprint`), a Ctrl-C seen by every part of a local run
(`interrupt`), progress records of long components (`progress`). Imports nothing else of the
project."""
