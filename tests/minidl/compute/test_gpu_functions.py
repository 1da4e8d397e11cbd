"""Every Function on CuPy arrays against numpy, to float32 tolerance.

The cases are the gradient-check cases of ``tests/minidl/functions``, which
cover every Function: each runs in float32 on the CPU and on the GPU (with
the default ``config.use_cudnn``), and outputs and input gradients are
compared. Skips without a GPU.
"""

import importlib
import pathlib

import numpy as np
import pytest

from minidl.tensor import Tensor

from tests.minidl.compute.gpu_support import require_gpu

FUNCTION_TESTS = pathlib.Path(__file__).resolve().parents[1] / 'functions'


def all_cases():
    for path in sorted(FUNCTION_TESTS.glob('test_*.py')):
        module = importlib.import_module(f'tests.minidl.functions.{path.stem}')
        yield from getattr(module, 'GRADCHECK_CASES', [])


def run(case, xp):
    inputs = []
    for value in case.inputs:
        array = np.asarray(value)
        if array.dtype.kind == 'f':
            inputs.append(Tensor.wrap(xp.asarray(array.astype(np.float32))).requires_grad_())
        else:
            inputs.append(Tensor.wrap(xp.asarray(array)))
    outputs = case.call(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    floating = [y for y in outputs if y.dtype.kind == 'f' and y.requires_grad]
    rng = np.random.default_rng(0)
    total = None
    for y in floating:
        weight = Tensor.wrap(xp.asarray(rng.standard_normal(y.shape).astype(np.float32)))
        term = (y * weight).sum()
        total = term if total is None else total + term
    if total is not None:
        total.backward()
    to_host = (lambda a: a) if xp is np else xp.asnumpy
    return ([to_host(y.data) for y in outputs],
            [to_host(x.grad.data) for x in inputs if x.requires_grad and x.grad is not None])


@pytest.mark.parametrize('case', list(all_cases()), ids=str)
def test_gpu_matches_cpu(case):
    cupy = require_gpu()
    cpu, gpu = run(case, np), run(case, cupy)
    for got, want in zip(gpu[0] + gpu[1], cpu[0] + cpu[1]):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4, err_msg=str(case))
    assert len(gpu[1]) == len(cpu[1])
