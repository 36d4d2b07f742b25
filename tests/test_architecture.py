"""The import rules of docs/architecture.md, checked on the source with `ast` (no imports run)."""

import ast
import os
import re
from typing import Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = (
  'cli',
  'components',
  'contracts',
  'data_revisions',
  'engines',
  'inference',
  'kubeflow',
  'metadata',
  'monitoring',
  'records',
  'reporting',
  'trainer',
  'utils',
)
TOP_MODULES = ('pipeline', 'example_gens', 'config', 'cache_keys')
PROJECT = PACKAGES + TOP_MODULES
# Who may import whom (first name of the importing module → first names it may import).
ALLOWED = {
  'contracts': {'contracts'},
  'utils': {'utils'},  # atomic writes, fingerprints, Ctrl-C, progress, object storage: a leaf
  'engines': {'engines'},  # local engine clusters and their Beam arguments: a leaf, as contracts
  'records': {'records', 'contracts', 'utils'},  # TFRecords' CRC scan, image-folder listing
  # engines.flink_rest: live counts on Flink; metadata.transform_cache: Transform's last cache
  'components': {'components', 'contracts', 'utils', 'engines', 'records', 'metadata'},
  'trainer': {'trainer', 'contracts', 'utils', 'records'},
  'metadata': {'metadata', 'contracts', 'utils'},
  'data_revisions': {'data_revisions', 'contracts', 'utils', 'metadata'},  # metadata.connection
  'inference': {'inference', 'contracts', 'utils'},
  # Pages and lines drawn from the facts metadata/ gathered, never reading ML Metadata itself
  # (test_reporting_draws_from_gathered_facts_alone).
  'reporting': {
    'reporting',
    'contracts',
    'utils',
    'records',  # records.image_codec: the pictures of image records
  },
  'monitoring': {'monitoring', 'contracts', 'utils', 'metadata', 'reporting'},  # its page too
  'kubeflow': {'kubeflow', 'contracts', 'utils'},
  'config': {'contracts', 'utils'},  # utils.object_storage: Beam's S3 flags
  'pipeline': {'cache_keys', 'components', 'config', 'contracts', 'example_gens', 'utils'},
  'example_gens': {'cache_keys', 'components', 'config', 'contracts'},  # the DAG's first step
  # the run's code (trainer.models: the default model's file) and object storage's checksums
  'cache_keys': {'config', 'contracts', 'utils', 'trainer'},
  'cli': set(PROJECT),
}


# The one import the rules below let pass, and only inside `if __name__ == '__main__':`: pipeline.py
# run as a script hands over to the command line, which imports pipeline.py again to build the DAG.
HAND_OFF = ('pipeline', 'cli.main')


def _is_main_guard(node: ast.AST) -> bool:
  """`if __name__ == '__main__':` — a script's entry."""
  return (
    isinstance(node, ast.If)
    and isinstance(node.test, ast.Compare)
    and isinstance(node.test.left, ast.Name)
    and node.test.left.id == '__name__'
  )


def _imports(tree: ast.AST, in_main_guard: Optional[bool] = None):
  """Every project module imported anywhere in `tree` (function bodies and the `__main__` block
  included); with `in_main_guard` True, only those inside `if __name__ == '__main__':`, False
  only those outside it."""
  found = set()
  stack = [(tree, False)]
  while stack:
    node, guarded = stack.pop()
    guarded = guarded or _is_main_guard(node)
    stack.extend((child, guarded) for child in ast.iter_child_nodes(node))
    if in_main_guard is not None and guarded != in_main_guard:
      continue
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      names = [f'{node.module}.{alias.name}' for alias in node.names]
    else:
      continue
    found.update(name for name in names if name.split('.')[0] in PROJECT)
  return found


def _source_files():
  """(module name, path) of every project source file."""
  for top in TOP_MODULES:
    yield top, os.path.join(ROOT, f'{top}.py')
  for package in PACKAGES:
    for folder, _, files in os.walk(os.path.join(ROOT, package)):
      for name in files:
        if name.endswith('.py'):
          path = os.path.join(folder, name)
          module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, '.')
          module = module[: -len('.__init__')] if module.endswith('.__init__') else module
          yield module, path


def _parsed(path: str) -> ast.AST:
  with open(path) as f:
    return ast.parse(f.read())


def _modules():
  """{module name: set of imported project names} for every project source file, the hand-off
  taken out where it stands in pipeline.py's `__main__` block (and only there)."""
  graph = {}
  for module, path in _source_files():
    tree = _parsed(path)
    handed_off = module == HAND_OFF[0] and HAND_OFF[1] not in _imports(tree, in_main_guard=False)
    graph[module] = _imports(tree) - ({HAND_OFF[1]} if handed_off else set())
  return graph


def test_the_main_hand_off_is_the_one_import_in_a_main_block():
  handed = {
    (module, name)
    for module, path in _source_files()
    for name in _imports(_parsed(path), in_main_guard=True)
  }
  assert handed == {HAND_OFF}


def test_imports_in_a_main_block_are_found():
  tree = ast.parse('import cli.run\nif __name__ == "__main__":\n  from cli import main\n')
  assert _imports(tree) == {'cli.run', 'cli.main'}
  assert _imports(tree, in_main_guard=True) == {'cli.main'}
  assert _imports(tree, in_main_guard=False) == {'cli.run'}


@pytest.fixture(scope='module')
def graph():
  return _modules()


def _resolve(name: str, graph: dict) -> str:
  """`pkg.mod.attr` → the longest prefix that is a module of the project."""
  parts = name.split('.')
  for end in range(len(parts), 0, -1):
    if '.'.join(parts[:end]) in graph:
      return '.'.join(parts[:end])
  return name


def test_layers_import_only_what_docs_architecture_allows(graph):
  broken = [
    f'{module} imports {name}'
    for module, names in graph.items()
    for name in names
    if name.split('.')[0] not in ALLOWED[module.split('.')[0]]
  ]
  assert not broken


# What reads a run's ML Metadata: the project's readers and ML Metadata's own client.
STORE_READERS = ('metadata', 'ml_metadata')


def _store_reads(tree: ast.AST) -> list:
  """Every import in `tree` (function bodies included) of a reader of ML Metadata."""
  found = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      found += [a.name for a in node.names if a.name.split('.')[0] in STORE_READERS]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      if node.module.split('.')[0] in STORE_READERS:
        found.append(node.module)
  return found


def test_reporting_draws_from_gathered_facts_alone():
  """The run report's facts are gathered in metadata/report_facts.py (compare's in run_facts.py);
  reporting/ draws them and reads no ML Metadata of its own."""
  assert _store_reads(
    ast.parse('from ml_metadata.proto import x\ndef f():\n  import metadata')
  ) == [
    'ml_metadata.proto',
    'metadata',
  ]
  found = [
    f'{module} imports {name}'
    for module, path in _source_files()
    if module.split('.')[0] == 'reporting'
    for name in _store_reads(_parsed(path))
  ]
  assert not found
  reading = ('TFRecordDataset', 'saved_model_ops', 'saved_model.load', 'gfile')
  readers = [  # records and models too (issue 69): metadata/eval_predictions.py reads them
    f'{module} uses {name}'
    for module, path in _source_files()
    if module.split('.')[0] == 'reporting'
    for name in reading
    if name in ast.unparse(_parsed(path))
  ]
  assert not readers


def test_no_component_imports_another_components_executor_or_package(graph):
  broken = []
  for module, names in graph.items():
    for name in map(lambda n: _resolve(n, graph), names):
      parts = name.split('.')
      if parts[0] != 'components' or len(parts) < 3:
        continue  # components.file_based, components.duplicates, …: shared by design
      owner = parts[1]
      importer = module.split('.')
      same_component = importer[0] == 'components' and importer[1:2] == [owner]
      if parts[2] == 'executor' and not same_component:
        broken.append(f'{module} imports {name}')
      if importer[0] == 'components' and not same_component:
        broken.append(f'{module} imports {name}')
  assert not broken


def test_no_import_cycles(graph):
  edges = {
    module: {_resolve(name, graph) for name in names} & set(graph)
    for module, names in graph.items()
  }
  for module in edges:  # a package's __init__ is not an edge back to its own modules
    edges[module].discard(module)
  state, cycles = {}, []

  def visit(module, path):
    state[module] = 'open'
    for target in sorted(edges[module]):
      if state.get(target) == 'open':
        cycles.append(' → '.join(path[path.index(target) :] + [target]))
      elif target not in state:
        visit(target, path + [target])
    state[module] = 'done'

  for module in sorted(edges):
    if module not in state:
      visit(module, [module])
  assert not cycles


def _opens_ml_metadata(tree: ast.AST) -> bool:
  """Whether the source builds an ML Metadata connection or constructs a store."""
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and any(a.name == 'ConnectionConfig' for a in node.names):
      return True
    if isinstance(node, (ast.Name, ast.Attribute)):
      name = node.id if isinstance(node, ast.Name) else node.attr
      if name in ('ConnectionConfig', 'sqlite_metadata_connection_config'):  # TFX's builder too
        return True
    if isinstance(node, ast.Call):
      called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, 'attr', '')
      if called == 'MetadataStore':
        return True
  return False


def test_contracts_import_tensorflow_only_inside_functions():
  """contracts/ is layouts and names: importing it costs no TensorFlow (the record codecs that
  need it are records/image_codec.py and records/text_codec.py)."""
  eager = []
  for module, path in _source_files():
    for node in _parsed(path).body if module.startswith('contracts') else ():
      if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
      elif isinstance(node, ast.ImportFrom):
        names = [node.module or '']
      else:
        continue
      eager += [f'{module} imports {n}' for n in names if n.split('.')[0] == 'tensorflow']
  assert not eager


def test_only_metadata_connection_opens_ml_metadata():
  opening = [module for module, path in _source_files() if _opens_ml_metadata(_parsed(path))]
  assert opening == ['metadata.connection']


def _is_private(name: str) -> bool:
  return name.startswith('_') and not name.startswith('__')


def _private_reads(tree: ast.AST, module: str, modules: set) -> list:
  """Every private name of another project module that `module`'s source reads: `other._name`
  where `other` is an imported project module, or `from other import _name`."""
  imported, found = {}, []  # name in the source → the project module it stands for
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      imported.update((a.asname or a.name, a.name) for a in node.names if a.name in modules)
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
      for alias in node.names:
        if f'{node.module}.{alias.name}' in modules:
          imported[alias.asname or alias.name] = f'{node.module}.{alias.name}'
        elif _is_private(alias.name) and node.module != module:
          found.append(f'{module}: from {node.module} import {alias.name}')
  for node in ast.walk(tree):
    if isinstance(node, ast.Attribute) and _is_private(node.attr):
      owner = imported.get(ast.unparse(node.value))
      if owner not in (None, module):
        found.append(f'{module}: {ast.unparse(node)}')
  return found


def test_private_reads_are_found():
  source = (
    'from metadata import report\nimport monitoring.images as images\n'
    'from metadata.summary import _flat, NodeRun\n'
    'report._table([], [])\nimages._records([])\nreport.render\nreport.__doc__\n'
  )
  modules = {'metadata', 'metadata.report', 'metadata.summary', 'monitoring.images', 'cli.compare'}
  assert sorted(_private_reads(ast.parse(source), 'cli.compare', modules)) == [
    'cli.compare: from metadata.summary import _flat',
    'cli.compare: images._records',
    'cli.compare: report._table',
  ]


def test_no_module_reads_another_modules_private_names():
  modules = {module for module, _ in _source_files()}
  found = [
    read
    for module, path in _source_files()
    for read in _private_reads(_parsed(path), module, modules)
  ]
  assert not found


def test_every_folder_is_in_docs_architecture():
  with open(os.path.join(ROOT, 'docs', 'architecture.md')) as f:
    doc = f.read()
  for package in PACKAGES + ('schema', 'tests', 'bench', 'docs'):
    assert re.search(rf'`{package}/`', doc), f'{package}/ is not described'
  for module in TOP_MODULES:
    assert f'`{module}.py`' in doc


# A line that names modules: a bullet or a table row that starts with them, then ':' or '|'.
_NAMING_LINE = re.compile(r'^(?:- |\| )((?:`[^`\s]+`(?:,? and |, |/)?)+)(?::|\s*\|)')
_FOLDER_HEADING = re.compile(r'^#{2,4} `([\w/]+/)`\s*$')


def _named(doc: str, folder: str) -> set:
  """Root-relative paths that `doc` names at the start of its bullets and table rows: relative
  to `folder`, or to the folder of the heading above them ("### `cli/`")."""
  named, prefix = set(), folder
  for line in doc.splitlines():
    if line.startswith('#'):
      heading = _FOLDER_HEADING.match(line)
      prefix = heading.group(1) if heading else folder
      continue
    match = _NAMING_LINE.match(line)
    if match:
      named.update(prefix + name for name in re.findall(r'`([^`]+)`', match.group(1)))
  return named


def test_naming_lines_are_read_from_bullets_rows_and_headings():
  doc = (
    '| `pipeline.py` | the DAG |\n### `cli/`\n- `run.py`: run\n'
    '- `inputs/a.py`, `inputs/b.py`: two\n- `x.py` and `y/`: pair\n'
    '- `z.py` is mentioned, not named\n## Rules\n- `c.py`: at the root again\n'
  )
  assert _named(doc, '') == {
    'pipeline.py',
    'cli/run.py',
    'cli/inputs/a.py',
    'cli/inputs/b.py',
    'cli/x.py',
    'cli/y/',
    'c.py',
  }


def _documented() -> set:
  """What docs/architecture.md and every product folder's README.md name."""
  docs = [(os.path.join(ROOT, 'docs', 'architecture.md'), '')]
  for package in PACKAGES:
    for folder, _, files in os.walk(os.path.join(ROOT, package)):
      if 'README.md' in files:
        relative = os.path.relpath(folder, ROOT).replace(os.sep, '/') + '/'
        docs.append((os.path.join(folder, 'README.md'), relative))
  named = set()
  for path, folder in docs:
    with open(path) as f:
      named |= _named(f.read(), folder)
  return named


def _module_paths() -> set:
  """Root-relative paths of every product module (packages' __init__.py aside)."""
  return {
    os.path.relpath(path, ROOT).replace(os.sep, '/')
    for _, path in _source_files()
    if os.path.basename(path) != '__init__.py'
  }


def test_every_product_module_is_named_in_docs_architecture_or_its_folders_readme():
  unnamed = sorted(_module_paths() - _documented())
  assert not unnamed, f'not named in docs/architecture.md or its README.md: {unnamed}'


def test_every_named_module_and_folder_exists():
  missing = sorted(
    name
    for name in _documented()
    if name.endswith(('.py', '/')) and not os.path.exists(os.path.join(ROOT, name))
  )
  assert not missing, f'named in the docs, not in the tree: {missing}'


def test_every_component_has_a_readme_and_a_line_in_docs_architecture():
  named = _documented()
  for entry in sorted(os.listdir(os.path.join(ROOT, 'components'))):
    folder = os.path.join(ROOT, 'components', entry)
    if os.path.isfile(os.path.join(folder, '__init__.py')):
      assert os.path.isfile(os.path.join(folder, 'README.md')), f'components/{entry}/: no README'
      assert f'components/{entry}/' in named, f'components/{entry}/ is not in the map'


def _component_function_names(tree: ast.AST) -> list:
  """The functions decorated `@component` (TFX's function-based components)."""
  return [
    node.name
    for node in ast.walk(tree)
    if isinstance(node, ast.FunctionDef)
    and any(getattr(d, 'id', None) == 'component' for d in node.decorator_list)
  ]


def test_executor_py_is_tfx_s_executor_class_or_the_work_a_component_function_calls():
  """docs/architecture.md (components/): a class-based component's executor.py holds the
  Executor class TFX runs; a `@component` function's executor.py the work it calls, no Executor."""
  wrong = []
  for entry in sorted(os.listdir(os.path.join(ROOT, 'components'))):
    folder = os.path.join(ROOT, 'components', entry)
    executor = os.path.join(folder, 'executor.py')
    if not os.path.isfile(executor):
      continue
    functions = _component_function_names(_parsed(os.path.join(folder, 'component.py')))
    classes = {node.name for node in _parsed(executor).body if isinstance(node, ast.ClassDef)}
    if bool(functions) == ('Executor' in classes):
      wrong.append(f'components/{entry}: @component {functions}, executor.py classes {classes}')
  assert not wrong


# Test files that test a folder as a whole, not one module of it.
WHOLE_FOLDER_TESTS = {
  'kubeflow/test_compile.py',  # `pipeline.py compile`: compiler.py and parameters.py, offline
  'kubeflow/test_image.py',  # the image kubeflow/Dockerfile builds
  'kubeflow/test_containers.py',  # a compiled pipeline run in that image's containers
}


def test_every_test_file_is_named_after_a_module_of_the_folder_it_mirrors():
  """tests/<folder>/test_<name>[_<topic>].py: <name> a module or a component of <folder>;
  tests/e2e/ and tests/support/ aside."""
  unnamed = []
  tests = os.path.join(ROOT, 'tests')
  for folder, _, files in os.walk(tests):
    relative = os.path.relpath(folder, tests).replace(os.sep, '/')
    if relative == '.' or relative.split('/')[0] in ('e2e', 'support', '__pycache__'):
      continue
    source = os.path.join(ROOT, relative)
    names = {name[:-3] for name in os.listdir(source) if name.endswith('.py')}
    names |= {name for name in os.listdir(source) if os.path.isdir(os.path.join(source, name))}
    for name in files:
      test = f'{relative}/{name}'
      if not name.startswith('test_') or not name.endswith('.py') or test in WHOLE_FOLDER_TESTS:
        continue
      subject = name[len('test_') : -len('.py')]
      if not any(subject == n or subject.startswith(n + '_') for n in names - {'__init__'}):
        unnamed.append(test)
  assert not unnamed, f'tests named after no module of the folder they mirror: {unnamed}'


def _diagram_edges(doc: str) -> set:
  """(importer, imported) of the arrows in the map's "Who imports whom" diagram: `x/ ──► a/, b.py
  (why), …` (a continued line indented), folder and module names without `/` and `.py`."""
  block = doc.split('## Who imports whom', 1)[1].split('```')[1]
  lines = []
  for line in block.splitlines():
    if line.startswith(' ') and lines:
      lines[-1] += ' ' + line.strip()
    elif '►' in line:
      lines.append(line)
  name = lambda item: item.strip().rstrip('/').removesuffix('.py')
  edges = set()
  for line in lines:
    importer, imported = line.split('►', 1)
    imported = re.sub(r'\([^)]*\)', '', imported)
    edges |= {(name(importer.rstrip('─ ')), name(item)) for item in imported.split(',')}
  return edges


def test_diagram_edges_are_read():
  doc = '## Who imports whom\n```\na/ ──► b.py, c/ (why,\n      more), d/\nx/: nothing\n```'
  assert _diagram_edges(doc) == {('a', 'b'), ('a', 'c'), ('a', 'd')}


def test_the_import_diagram_has_every_arrow_and_no_other(graph):
  """Folder to folder, `contracts/` and `utils/` (which every folder may import) aside."""
  with open(os.path.join(ROOT, 'docs', 'architecture.md')) as f:
    drawn = _diagram_edges(f.read())
  actual = {
    (module.split('.')[0], name.split('.')[0])
    for module, names in graph.items()
    for name in names
    if module.split('.')[0] != name.split('.')[0]
    and name.split('.')[0] not in ('contracts', 'utils')
  }
  assert sorted(drawn - actual) == [] and sorted(actual - drawn) == []


def _loads_saved_models(tree: ast.AST) -> list:
  """Calls of `….saved_model.load(…)` or `saved_model_ops.register()` in a source tree."""
  return [
    ast.unparse(node.func)
    for node in ast.walk(tree)
    if isinstance(node, ast.Call)
    and isinstance(node.func, ast.Attribute)
    and (
      (node.func.attr == 'load' and ast.unparse(node.func.value).endswith('saved_model'))
      or ast.unparse(node.func) == 'saved_model_ops.register'
    )
  ]


def test_one_model_loader():
  """Every reader of a SavedModel goes through utils/saved_model_ops.load (or, inside TFMA and
  tfx-bsl, its with_beam_args): none remembers the ops by itself."""
  found = {
    module: _loads_saved_models(_parsed(path))
    for module, path in _source_files()
    if module != 'utils.saved_model_ops'
  }
  assert {module: calls for module, calls in found.items() if calls} == {}
  here = _loads_saved_models(ast.parse('tf.saved_model.load(p)\nsaved_model_ops.register()'))
  assert here == ['tf.saved_model.load', 'saved_model_ops.register']  # the check itself works
