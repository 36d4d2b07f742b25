"""What the Evaluator's configuration and its readers agree on: TFMA model names and the metric
that blesses."""

CANDIDATE, BASELINE = 'candidate', 'baseline'  # the model just trained, the serving one
ACCURACY_METRIC = 'SparseCategoricalAccuracy'  # the class name in eval_config
ACCURACY_KEY = 'sparse_categorical_accuracy'  # its name in TFMA's results
