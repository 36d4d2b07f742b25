"""Ctrl-C during a local run, seen by every part of the process.

cli/run.py's SIGINT handler sets REQUESTED, then raises KeyboardInterrupt as Python would. Keras 3
can swallow that exception: when it lands in fit's conversion of the logs to floats (a bare
`except:` around `float(value)`, which is where the main thread waits for each step), training
goes on. The Trainer's StopOnInterrupt callback (trainer/task.py) raises it again at the next
batch.
"""

import threading

REQUESTED = threading.Event()
