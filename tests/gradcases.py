"""Gradient-check cases shared by the function tests.

Each ``tests/minidl/functions/test_<topic>.py`` lists ``GRADCHECK_CASES``, a list of
:class:`GradCase`, and runs them with ``run_gradcheck``.
``test_every_function_is_gradchecked`` collects all the lists and fails if a
Function subclass of minidl has no case.
"""

import dataclasses
from typing import Callable

import numpy as np

from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor


@dataclasses.dataclass
class GradCase:
    """One float64 finite-difference check of one Function class.

    Attributes:
        function: The Function subclass this case covers; the check fails
            unless that class appears in the graph that ``call`` builds.
        call: Takes the input tensors, returns a tensor or tuple of tensors.
        inputs: Input arrays (floating ones are checked).
        name: Distinguishes several cases of one function.
        tolerances: Extra keyword arguments for ``gradcheck`` (eps, atol, rtol).
    """
    function: type
    call: Callable
    inputs: list
    name: str = ''
    tolerances: dict = dataclasses.field(default_factory=dict)

    def __str__(self):
        return self.function.__name__ + (f'-{self.name}' if self.name else '')


def functions_in_graph(outputs):
    """The set of Function classes recorded in the graph behind ``outputs``."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    found, stack, seen = set(), [t.creator for t in outputs if isinstance(t, Tensor)], set()
    while stack:
        function = stack.pop()
        if function is None or id(function) in seen:
            continue
        seen.add(id(function))
        found.add(type(function))
        stack.extend(t.creator for t in function.inputs)
    return found


def run_gradcheck(case):
    """Run ``case``: prove it exercises its Function, then check its gradients."""
    probe = [Tensor.wrap(np.array(x, dtype=np.float64)).requires_grad_()
             if np.asarray(x).dtype.kind == 'f' else Tensor.wrap(np.asarray(x))
             for x in case.inputs]
    found = functions_in_graph(case.call(*probe))
    assert case.function in found, (
        f'{case} builds a graph of {sorted(f.__name__ for f in found)}, '
        f'without {case.function.__name__}')
    assert gradcheck(case.call, case.inputs, **case.tolerances)


def random(*shape, seed=0, low=None, high=None):
    """A float64 array of standard normals (or uniforms in [low, high))."""
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, size=shape)
    return rng.standard_normal(shape)
