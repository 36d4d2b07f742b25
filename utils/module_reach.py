"""What a function of a user's module file reaches, for cache keys: the top-level definitions
its code names, followed through one another (helpers, constants, imports), and the files beside
the module that it imports. An edit outside that reach (another function, a comment, a blank
line) leaves the digest as it was."""

import ast
import hashlib
import os
from typing import Dict, List, Set


def _top_level(tree: ast.Module) -> Dict[str, List[ast.AST]]:
  """{name: the top-level statements that bind it}."""
  bound: Dict[str, List[ast.AST]] = {}
  for node in tree.body:
    names = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
      names = [node.name]
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [node.target]
      names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      names = [(a.asname or a.name).split('.')[0] for a in node.names]
    for name in names:
      bound.setdefault(name, []).append(node)
  return bound


def _reached(tree: ast.Module, start: str) -> List[ast.AST]:
  """The top-level statements `start` reaches, in file order."""
  bound = _top_level(tree)
  seen: Set[str] = set()
  todo = [start]
  while todo:
    name = todo.pop()
    if name in seen or name not in bound:
      continue
    seen.add(name)
    for node in bound[name]:
      todo += [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
  nodes = {id(node): node for name in seen for node in bound[name]}
  return [node for node in tree.body if id(node) in nodes]


def imported_tops(statements) -> List[str]:
  """The top-level names of the modules `statements` import absolutely (function bodies too),
  in order, once each."""
  tops: List[str] = []
  for node in (n for statement in statements for n in ast.walk(statement)):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      names = [node.module]
    else:
      continue
    tops += [top for top in (name.split('.')[0] for name in names) if top not in tops]
  return tops


def local_imports(path: str, nodes=None) -> List[str]:
  """Files beside `path` (its folder's .py modules) that `nodes` (default: the whole file)
  import, followed through their own imports."""
  folder = os.path.dirname(os.path.abspath(path))
  found: List[str] = []
  todo = [(path, nodes)]
  while todo:
    current, body = todo.pop()
    if body is None:
      with open(current, encoding='utf-8') as f:
        body = ast.parse(f.read()).body
    for top in imported_tops(body):
      beside = os.path.join(folder, f'{top}.py')
      if os.path.isfile(beside) and beside not in found and beside != os.path.abspath(path):
        found.append(beside)
        todo.append((beside, None))
  return sorted(found)


def digest(path: str, function: str) -> str:
  """A digest of the code `function` of the module file reaches (its statements as ast dumps,
  formatting and comments aside) and of the files beside it that this code imports."""
  with open(path, encoding='utf-8') as f:
    tree = ast.parse(f.read())
  reached = _reached(tree, function)
  hashed = hashlib.sha256()
  for node in reached:
    hashed.update(ast.dump(node).encode())
  for beside in local_imports(path, reached):
    with open(beside, 'rb') as f:
      hashed.update(f.read())
  return hashed.hexdigest()[:16]
