"""The input check's verdict, from its figures alone (trainer/diagnosis.py measures them; the
Trainer's log line and the report's "Input pipeline" section both say what this decides).

Input-bound means the input cannot keep up: the pipeline alone delivers fewer examples a second
than one training step takes. The share of time a paced consumer waited in next() is not enough
on its own: a fixed cost per batch (the call itself, handing a batch over) shows up as waiting
whatever the input's throughput, and weighs more the shorter the step. When the input keeps up
and the consumer still waited above INPUT_BOUND, the verdict names that cost per batch instead.
"""

import dataclasses

INPUT_BOUND = 0.05  # the TF profiler's line: more than 5 % of step time waiting for input
PER_BATCH_HINT = 'a larger --batch-size spreads it over more examples'


@dataclasses.dataclass(frozen=True)
class Verdict:
  input_bound: bool
  headline: str  # 'input-bound: …' or 'not input-bound: …', with the input's pace
  detail: str = ''  # what the waiting was, when the input keeps up but the consumer waited

  @property
  def words(self) -> str:
    """One sentence, without the hint of an input-bound verdict."""
    return f'{self.headline}; {self.detail}' if self.detail else self.headline


def waited_per_batch(step_seconds: float, stall_fraction: float) -> float:
  """Seconds waited per batch by a consumer that took step_seconds per batch and waited
  stall_fraction of its wall time."""
  return step_seconds * stall_fraction / (1.0 - stall_fraction) if stall_fraction < 1 else 0.0


def verdict(
  input_examples_per_second: float, step_seconds: float, batch_size: int, stall_fraction: float
) -> Verdict:
  """Input-bound only when the input's throughput is below the step's."""
  pace = input_examples_per_second * step_seconds / batch_size  # input's rate / the step's
  if pace < 1:
    return Verdict(True, f'input-bound: the input alone delivers {pace:.2f}x what the step takes')
  keeps_up = f'not input-bound: the input alone delivers {pace:,.1f}x what the step takes'
  if stall_fraction > INPUT_BOUND:
    per_batch_ms = waited_per_batch(step_seconds, stall_fraction) * 1000
    return Verdict(
      False,
      keeps_up,
      f'the {stall_fraction:.1%} of time waited is a fixed cost of '
      f'{per_batch_ms:.2f} ms per batch taken, which weighs on a {step_seconds * 1000:.1f} ms '
      f'step however fast the input is ({PER_BATCH_HINT})',
    )
  return Verdict(False, keeps_up)


def of_check(check: dict, batch_size: int) -> Verdict:
  """The verdict on the figures the Trainer recorded (training.json's input_check)."""
  return verdict(
    check['input_examples_per_second'], check['step_seconds'], batch_size, check['stall_fraction']
  )
