"""Every Function subclass in minidl has a float64 gradient check.

Each test module of this folder lists its checks in ``GRADCHECK_CASES``; each
case proves, when it runs, that its Function appears in the graph it checks.
"""

import importlib
import pathlib
import pkgutil

import minidl
import minidl.functions
from minidl.tensor import Function

HERE = pathlib.Path(__file__).parent


def all_function_classes():
    """Every concrete Function subclass defined in minidl's modules."""
    for info in pkgutil.walk_packages(minidl.__path__, 'minidl.'):
        importlib.import_module(info.name)
    found, stack = set(), [Function]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith('minidl.') and not sub.__name__.startswith('_'):
                found.add(sub)
    return found


def gradchecked_classes():
    covered = set()
    for path in sorted(HERE.glob('test_*.py')):
        module = importlib.import_module(f'tests.minidl.functions.{path.stem}')
        covered.update(case.function for case in getattr(module, 'GRADCHECK_CASES', []))
    return covered


def test_every_function_has_a_gradient_check():
    missing = all_function_classes() - gradchecked_classes()
    assert not missing, 'Functions without a GradCase: ' + ', '.join(
        sorted(f'{cls.__module__}.{cls.__name__}' for cls in missing))


def test_the_enumeration_finds_the_core_functions():
    names = {cls.__name__ for cls in all_function_classes()}
    assert {'Add', 'MatMul', 'Sum', 'GetItem'} <= names
