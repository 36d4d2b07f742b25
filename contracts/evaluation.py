"""What the Evaluator's configuration and its readers agree on: TFMA model names, the metrics
that bless and how TFMA names them in its results."""

CANDIDATE, BASELINE = 'candidate', 'baseline'  # the model just trained, the serving one
ACCURACY_METRIC = 'SparseCategoricalAccuracy'  # the class name in eval_config
ACCURACY_KEY = 'sparse_categorical_accuracy'  # its name in TFMA's results
# Per class (one sub key per class id; an example is given class c when the model's probability
# for c is above 0.5): the share of c's eval examples given c, and of those given c, how many are.
RECALL_METRIC, RECALL_KEY = 'Recall', 'recall'
PRECISION_METRIC, PRECISION_KEY = 'Precision', 'precision'
CONFUSION_PLOT = 'MultiClassConfusionMatrixPlot'
