"""Errors and exit codes every command shares."""

EXIT_OK = 0
EXIT_FAILED = 1  # a component failed, the data has anomalies or drifted, damage found
EXIT_BAD_INPUT = 2  # bad flags, unusable data or output: one line on stderr, no traceback
EXIT_NOT_BLESSED = 3  # trained and evaluated, not blessed: nothing pushed, serving unchanged
EXIT_NOT_SERVABLE = 4  # blessed, but failed the serving check: nothing pushed, serving unchanged
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it): summary and report written
EXIT_TERMINATED = 143  # SIGTERM (128 + SIGTERM): as Ctrl-C, summary, report and last_run.json
INTERRUPTED = 'interrupted'


def first_line(error: BaseException) -> str:
  """An error's message, its first line only (its type's name when it has none): for the one
  line a refusal prints."""
  details = getattr(error, 'details', None)
  if callable(details) and callable(getattr(error, 'code', None)):  # a gRPC error (Beam's job API)
    return f'the Beam job service stopped answering: {details()} ({error.code().name})'
  text = str(error).strip()
  return text.splitlines()[0] if text else type(error).__name__


class UserError(Exception):
  """Bad input: reported as one line, exit code 2, no traceback."""


class UnusableData(RuntimeError):
  """Raised by a component when the data cannot train a classifier (fewer than two classes,
  labels missing or not class ids): the run stops before training, exit code 2, one line."""


class UnusableModel(UnusableData):
  """Raised by the Trainer (or Tuner) when the model file cannot train on the data: it does not
  import, builds no keras.Model, or its inputs or outputs do not fit the data (exit code 2, one
  line, as for unusable data)."""
