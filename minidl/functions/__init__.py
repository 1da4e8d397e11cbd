"""Differentiable functions on tensors, one topic per module.

Every public wrapper is re-exported here, so ``minidl.functions.conv2d`` and
``minidl.functions.conv.conv2d`` are the same function. Where a wrapper
shares its module's name (``lstm``, ``gru``, ``embedding``), the package
attribute is the wrapper; reach the module's classes with
``from minidl.functions.lstm import LSTM``.
"""

from minidl.functions.math import (
    abs, add, clip, div, exp, log, matmul, maximum, minimum, mul, neg, pow, sqrt, sub, where)
from minidl.functions.reduction import logsumexp, max, mean, min, sum, var
from minidl.functions.accumulate import cumprod, cumsum, prod
from minidl.functions.trigonometry import cos, sin
from minidl.functions.array import (
    broadcast_to, cast, concat, expand_dims, getitem, pad, reshape, split, squeeze, stack,
    transpose)
from minidl.functions.activation import (
    elu, gelu, hard_sigmoid, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus,
    softsign, tanh)
from minidl.functions.dense import dense
from minidl.functions.loss import binary_cross_entropy, huber, mae, mse, softmax_cross_entropy
from minidl.functions.noise import dropout
from minidl.functions.embedding import embedding
from minidl.functions.conv import conv1d, conv2d
from minidl.functions.pooling import avg_pool2d, global_avg_pool2d, global_max_pool2d, max_pool2d
from minidl.functions.conv3d import conv3d, conv3d_transpose
from minidl.functions.pooling3d import avg_pool3d, max_pool3d
from minidl.functions.local import local_conv
from minidl.functions.normalization import batch_norm, layer_norm
from minidl.functions.ctc import ctc_loss
from minidl.functions.rnn import simple_rnn
from minidl.functions.lstm import lstm
from minidl.functions.gru import gru
from minidl.functions import masks  # noqa: F401  (mask arithmetic, minidl.functions.masks)
from minidl.functions import operators  # noqa: F401  (binds Tensor's operators)
