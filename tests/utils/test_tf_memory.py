"""utils/tf_memory.py: what a block's traces registered is gone after it, with their graphs; a
reduce leaves nothing in the default graph."""

import gc
import weakref

import tensorflow as tf
from tensorflow.python.framework import ops

from utils import tf_memory


def _custom_gradients() -> set:
  return {
    n for n in ops._gradient_registry.list() if n.startswith(tf_memory.CUSTOM_GRADIENT_PREFIX)
  }


@tf.custom_gradient
def _doubled(x):
  return 2 * x, lambda dy: 2 * dy


def test_a_blocks_custom_gradients_are_unregistered_and_their_graphs_freed():
  earlier = tf.function(lambda x: _doubled(x)).get_concrete_function(tf.TensorSpec([]))
  kept = _custom_gradients()
  assert kept  # registered by the trace before the block: left alone
  with tf_memory.custom_gradients_dropped():
    traced = tf.function(lambda x: _doubled(x)).get_concrete_function(tf.TensorSpec([]))
    assert len(_custom_gradients() - kept) == 1
    graph = weakref.ref(traced.graph)
  assert _custom_gradients() == kept
  del traced
  gc.collect()
  assert graph() is None  # the registered closure no longer holds it
  assert float(earlier(tf.constant(3.0))) == 6.0


def test_reduce_gives_datasets_reduce_and_leaves_the_default_graph_as_it_was():
  functions = len(ops.get_default_graph()._functions)
  numbers = tf.data.Dataset.range(10)
  total = tf_memory.reduce(numbers, tf.constant(0, tf.int64), lambda total, n: total + n)
  assert int(total) == 45
  assert len(ops.get_default_graph()._functions) == functions
  assert int(numbers.reduce(tf.constant(0, tf.int64), lambda t, n: t + n)) == 45
  assert len(ops.get_default_graph()._functions) == functions + 1  # what reduce() avoids
