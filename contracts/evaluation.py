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

# Custom properties the project adds to TFX's artifacts (components/blessing_evaluator,
# components/serving_pusher), read by metadata/summary.py.
# ModelBlessing: the classes present in the eval split that the model never predicts (top class),
# as JSON [{"class_id": 1, "examples": 6}, …]; when any, the model is not blessed (unless allowed).
MISSED_CLASSES = 'missed_classes'
# ModelBlessing: 1 when the candidate is the serving model itself (a cached model evaluated again
# after its push): it is evaluated alone, not compared with itself.
CANDIDATE_IS_SERVING = 'candidate_is_serving'
# PushedModel: the serving version that already holds the model (nothing pushed).
ALREADY_SERVING = 'already_serving'
