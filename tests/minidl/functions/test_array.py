"""Shape and indexing functions: gradient checks and values against numpy."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions import array as F
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(F.Reshape, lambda x: F.reshape(x, (4, -1)), [random(2, 3, 2)]),
    GradCase(F.Transpose, lambda x: F.transpose(x, (2, 0, 1)), [random(2, 3, 4)]),
    GradCase(F.Transpose, F.transpose, [random(2, 3)], 'reverse'),
    GradCase(F.Concat, lambda a, b: F.concat([a, b], axis=1), [random(2, 3), random(2, 1, seed=1)]),
    GradCase(F.Stack, lambda a, b: F.stack([a, b], axis=1), [random(2, 3), random(2, 3, seed=1)]),
    GradCase(F.Split, lambda x: F.split(x, [1, 3], axis=1), [random(2, 5)]),
    GradCase(F.Pad, lambda x: F.pad(x, ((1, 0), (2, 1)), value=3.0), [random(2, 3)]),
    GradCase(F.GetItem, lambda x: x[1:, ::2], [random(3, 4)], 'basic'),
    GradCase(F.GetItem, lambda x: x[np.array([0, 2, 0]), np.array([1, 1, 1])], [random(3, 4)],
             'repeated-integer-arrays'),
    GradCase(F.GetItem, lambda x: x[..., np.array([3, 0, 3])], [random(2, 4)], 'ellipsis'),
    GradCase(F.GetItem, lambda x: x[random(3, 4, seed=3) > 0], [random(3, 4)], 'boolean-mask'),
    GradCase(F.BroadcastTo, lambda x: F.broadcast_to(x, (2, 3, 4)), [random(3, 1)]),
    GradCase(F.ExpandDims, lambda x: F.expand_dims(x, 1), [random(2, 3)]),
    GradCase(F.Squeeze, lambda x: F.squeeze(x, 1), [random(2, 1, 3)]),
    GradCase(F.Cast, lambda x: F.cast(x, 'float64') * 2, [random(2, 3)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def test_values_match_numpy():
    x = random(2, 3, 4)
    t = Tensor(x, dtype='float64')
    checks = [
        (F.reshape(t, (6, 4)), x.reshape(6, 4)),
        (F.transpose(t, (1, 2, 0)), x.transpose(1, 2, 0)),
        (F.concat([t, t], axis=2), np.concatenate([x, x], axis=2)),
        (F.stack([t, t], axis=0), np.stack([x, x])),
        (F.pad(t, ((0, 0), (1, 1), (2, 0))), np.pad(x, ((0, 0), (1, 1), (2, 0)))),
        (t[:, np.array([2, 0])], x[:, [2, 0]]),
        (t[None, 1, ..., -1], x[None, 1, ..., -1]),
        (F.broadcast_to(t[:, :1], (2, 3, 4)), np.broadcast_to(x[:, :1], (2, 3, 4))),
        (F.expand_dims(t, -1), x[..., None]),
        (F.squeeze(t[:, :1]), x[:, 0]),
    ]
    for got, want in checks:
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(F.split(t, 2, axis=2), np.split(x, 2, axis=2)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_index_may_be_a_tensor_or_list():
    t = Tensor(np.arange(5.0))
    np.testing.assert_array_equal(t[Tensor([4, 0])].numpy(), [4.0, 0.0])
    np.testing.assert_array_equal(t[[1, 1]].numpy(), [1.0, 1.0])
