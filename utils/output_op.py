"""The op that makes a tensor of a TensorFlow graph, followed through identities, reshapes and
function calls: what a signature's output is made by (a Sigmoid: a probability; a Dense layer's
BiasAdd or MatMul: a logit). Works on a GraphDef, of a loaded function
(`function.graph.as_graph_def()`) or of a SavedModel's meta graph read from saved_model.pb (no
load); used by the Evaluator (a module file's one-wide output) and `predict`."""

from typing import Dict

PASS_THROUGH = ('Identity', 'IdentityN', 'Reshape', 'Squeeze', 'ExpandDims')  # values kept
# A Dense layer without activation ends in one of these: its output is a logit, not a probability.
LINEAR = ('BiasAdd', 'MatMul', 'BatchMatMulV2', 'Add', 'AddV2', 'Einsum')
SIGMOID = 'Sigmoid'
_MAX_DEPTH = 50


def _producer(functions: Dict, nodes, tensor: str, depth: int) -> str:
  parts = tensor.lstrip('^').split(':')
  node = next((n for n in nodes if n.name == parts[0]), None)
  if node is None or depth > _MAX_DEPTH:
    return ''
  if node.op.endswith('PartitionedCall'):
    inner = functions.get(node.attr['f'].func.name)
    # in a function body 'call:output:N', in a graph 'call:N'
    index = int(parts[-1]) if len(parts) > 1 else 0
    if inner is None or index >= len(inner.signature.output_arg):
      return node.op
    name = inner.signature.output_arg[index].name
    return _producer(functions, inner.node_def, inner.ret[name], depth + 1)
  if node.op in PASS_THROUGH:
    return _producer(functions, nodes, node.input[0], depth + 1)
  return node.op


def producer(graph_def, tensor: str) -> str:
  """The op type that makes `tensor` ('name:index') of `graph_def`; '' when it cannot be
  followed."""
  functions = {f.signature.name: f for f in graph_def.library.function}
  return _producer(functions, graph_def.node, tensor, 0)
