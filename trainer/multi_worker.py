"""Training across workers (MultiWorkerMirroredStrategy) with a small custom loop.

Keras 3's `fit()` fails under MultiWorkerMirroredStrategy with TensorFlow 2.16 (PerReplica values
reach its data adapter: keras-team/keras#20585, tensorflow/tensorflow#72388; the published
workaround is Keras 2). The Keras 3 optimizer itself is distribution-aware (it all-reduces the
gradients of every replica before applying them), so the loop only has to run one step per
replica and scale each replica's loss by the global batch.

Validation is left to the Evaluator component (it runs once, after training, on the eval split).
Each worker writes TensorBoard scalars to its own log folder (the chief's is the model run's).
"""

import logging
import os
from typing import Dict, List

import keras
import tensorflow as tf

from trainer.distribution import Plan

_SUM = tf.distribute.ReduceOp.SUM


def fit(
  model: keras.Model,
  dataset: tf.data.Dataset,
  plan: Plan,
  epochs: int,
  steps_per_epoch: int,
  global_batch: int,
  log_dir: str,
) -> Dict[str, List[float]]:
  """Trains `model` (built and compiled in plan.strategy's scope); returns the per-epoch
  history, as Keras' History would (loss, sparse_categorical_accuracy), and writes it to
  TensorBoard under <log_dir>/train with Keras' names (epoch_loss, …)."""
  strategy = plan.strategy
  with strategy.scope():
    model.optimizer.build(model.trainable_variables)
  per_example_loss = keras.losses.SparseCategoricalCrossentropy(reduction=None)
  iterator = iter(strategy.experimental_distribute_dataset(dataset))

  @tf.function
  def train_step(iterator):
    def replica_step(features, labels):
      with tf.GradientTape() as tape:
        probabilities = model(features, training=True)
        loss = tf.nn.compute_average_loss(
          per_example_loss(labels, probabilities), global_batch_size=global_batch
        )
      gradients = tape.gradient(loss, model.trainable_variables)
      model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
      hits = tf.cast(tf.equal(tf.argmax(probabilities, -1), labels), tf.float32)
      return loss, tf.reduce_sum(hits), tf.cast(tf.size(labels), tf.float32)

    results = strategy.run(replica_step, args=next(iterator))
    return [strategy.reduce(_SUM, value, axis=None) for value in results]

  history = {'loss': [], 'sparse_categorical_accuracy': []}
  writer = tf.summary.create_file_writer(os.path.join(log_dir, 'train'))
  for epoch in range(epochs):
    loss = hits = seen = 0.0
    for _ in range(steps_per_epoch):
      step_loss, step_hits, step_seen = train_step(iterator)
      loss, hits, seen = loss + float(step_loss), hits + float(step_hits), seen + float(step_seen)
    history['loss'].append(loss / steps_per_epoch)
    history['sparse_categorical_accuracy'].append(hits / max(seen, 1.0))
    with writer.as_default():
      for name, values in history.items():
        tf.summary.scalar(f'epoch_{name}', values[-1], step=epoch)
    logging.info(
      'epoch %d/%d (worker %d of %d): loss %.4f, sparse_categorical_accuracy %.4f',
      epoch + 1,
      epochs,
      plan.worker_index,
      plan.num_workers,
      history['loss'][-1],
      history['sparse_categorical_accuracy'][-1],
    )
  return history
