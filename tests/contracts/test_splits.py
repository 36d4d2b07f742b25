"""Which example goes to eval, and when content filed under two labels stays out of both."""

from contracts import splits


def test_the_split_is_stable_and_near_the_share_asked():
  keys = [f'class/{i}.png' for i in range(2000)]
  first = [splits.split_of(key, 20) for key in keys]
  assert first == [splits.split_of(key, 20) for key in keys]  # a re-run keeps its split
  assert 0.17 < first.count(splits.EVAL) / len(keys) < 0.23
  # The hash is pinned: another would move examples between splits from one version to the next.
  assert splits.path_hash('a/b.png') == 0x5D4698FCF042CDEA


def test_shares_add_up_to_100():
  assert splits.shares(30) == ((splits.TRAIN, 70), (splits.EVAL, 30))


def test_conflicts_are_left_out_while_few_or_rare():
  assert splits.conflicts_left_out(10, 20)  # a handful, in data of any size
  assert not splits.conflicts_left_out(11, 20)
  assert splits.conflicts_left_out(200, 10_000)  # at most 2 % of the examples
  assert not splits.conflicts_left_out(201, 10_000)
