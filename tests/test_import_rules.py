"""The import rules between the packages (the layering below), checked on every module's source.

Inside minidl, a module imports only from lower rows of::

    config, registry -> compute -> tensor -> functions, gradcheck -> data
    -> initializers, activations, regularizers, constraints, datasets
    -> layers -> losses -> metrics, optimizers, callbacks -> saving, mixed_precision -> models
    -> backend, engine -> utils -> preprocessing -> applications, wrappers

(``data`` sits below ``datasets``, whose loaders fetch files with its
``downloads.get_file``. ``saving`` sits below ``models`` because
``Model.save`` and ``load_model`` are models' API; saving rebuilds models from
the layer registry, by class name.
``utils`` is Keras's grab bag for users: some of it works on models, such as
``plot_model`` and ``layer_test``, so it sits above them. ``backend`` is
Keras's ``K``, a facade over tensors and layer graphs for users' code; it
sits above models so that it may use anything below, and below utils and
preprocessing, which may read its settings such as ``image_data_format()``.
``engine`` only re-exports classes at Keras 2's ``keras.engine`` paths.)

and from its own component (``minidl.functions.array`` may import
``minidl.functions.scatter``). The package's ``__init__`` gathers the public
API and may import anything in minidl. minidl never imports minidl_dist, zoo,
tests, tutorials or benchmarks; cupy is imported only under compute/, h5py
only in saving, mpi4py only in minidl_dist.
"""

import ast
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

ROWS = [
    ['config', 'registry', 'naming', 'interrupts'], ['compute'], ['tensor'],
    ['functions', 'gradcheck'], ['data'],
    ['initializers', 'activations', 'regularizers', 'constraints', 'datasets'],
    ['layers'], ['losses'], ['metrics', 'optimizers', 'callbacks'], ['saving', 'mixed_precision'],
    ['models'],
    ['backend', 'engine'],
    ['utils'],
    ['preprocessing'],
    ['applications', 'wrappers'],
]
RANK = {component: row for row, components in enumerate(ROWS) for component in components}
PROJECT_PACKAGES = {'minidl', 'minidl_dist', 'zoo', 'tests', 'tutorials', 'benchmarks'}


def imports_of(path):
    """Absolute names of the modules that the file at ``path`` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = '.'.join(path.relative_to(ROOT).with_suffix('').parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit('.', node.level - 1)[0] if node.level > 1 else package
                module = f'{base}.{node.module}' if node.module else base
            else:
                module = node.module
            yield module
            yield from (f'{module}.{alias.name}' for alias in node.names)


def component(module):
    """'minidl.functions.conv' -> 'functions'; 'minidl' -> None."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else None


def minidl_modules():
    return sorted((ROOT / 'minidl').rglob('*.py'))


@pytest.mark.parametrize('path', minidl_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_minidl_imports_follow_the_layering(path):
    module = '.'.join(path.relative_to(ROOT).with_suffix('').parts)
    if module == 'minidl.__init__':
        own_rank = len(ROWS)
        own = None
    else:
        own = component(module)
        assert own in RANK, f'{module} is not placed in the layering; add it to ROWS'
        own_rank = RANK[own]
    for imported in imports_of(path):
        top = imported.split('.')[0]
        assert top not in PROJECT_PACKAGES - {'minidl'}, f'{module} imports {imported}'
        if top == 'cupy':
            assert own == 'compute', f'{module} imports cupy outside minidl/compute'
        if top == 'h5py':
            assert own == 'saving', f'{module} imports h5py outside minidl/saving.py'
        assert top != 'mpi4py', f'{module} imports mpi4py, which only minidl_dist may use'
        if top != 'minidl' or imported == 'minidl':
            continue
        target = component(imported)
        if target == own:
            continue
        # Names from the package root (``from minidl import Tensor``) would import upward.
        assert target in RANK, f'{module} imports {imported}, which is not a layered module'
        assert RANK[target] < own_rank, \
            f'{module} (row {own_rank}) imports {imported} (row {RANK[target]}): not a lower row'


def required_dependencies():
    """The names of pyproject.toml's ``dependencies``: the one list of what minidl needs."""
    with open(ROOT / 'pyproject.toml', 'rb') as file:
        listed = tomllib.load(file)['project']['dependencies']
    return {re.split(r'[<>=!~ ;\[]', requirement, maxsplit=1)[0] for requirement in listed}


def test_import_minidl_needs_only_the_required_dependencies():
    """pyproject.toml's list is the README's, and in a fresh interpreter that can import no
    other third-party package (and not threadpoolctl, which minidl imports only when it
    first limits BLAS's threads, and does without), minidl imports and computes."""
    assert required_dependencies() == {'numpy', 'h5py', 'tqdm', 'threadpoolctl'}
    assert '(numpy, h5py, tqdm and threadpoolctl;' in (ROOT / 'README.md').read_text()
    allowed = required_dependencies() - {'threadpoolctl'}
    script = f'''
import sys
class Block:
    allowed = {sorted(allowed)!r}
    def find_spec(self, name, path=None, target=None):
        top = name.split('.')[0]
        if top in sys.stdlib_module_names or top in self.allowed or top == 'minidl' or top.startswith('_'):
            return None
        raise ModuleNotFoundError(f'blocked: {{name}}')
sys.meta_path.insert(0, Block())
import minidl
minidl.functions.relu(minidl.Tensor([1.0]))
'''  # noqa: E501 (a line of the script; wrapping it would change the string)
    result = subprocess.run([sys.executable, '-c', script], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
