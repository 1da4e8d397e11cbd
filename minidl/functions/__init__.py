"""Differentiable functions on tensors, one topic per module.

Every public wrapper is re-exported here, so ``minidl.functions.conv2d`` and
``minidl.functions.conv.conv2d`` are the same function.
"""

from minidl.functions.math import (
    abs, add, clip, div, exp, log, matmul, maximum, minimum, mul, neg, pow, sqrt, sub, where)
from minidl.functions.reduction import logsumexp, max, mean, min, sum, var
from minidl.functions.array import (
    broadcast_to, cast, concat, expand_dims, getitem, pad, reshape, split, squeeze, stack,
    transpose)
from minidl.functions import operators  # noqa: F401  (binds Tensor's operators)
