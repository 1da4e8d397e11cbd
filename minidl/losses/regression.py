"""Regression losses, each reduced over the last axis: errors, Huber, log-cosh, cosine."""

import math

import minidl.functions as F
from minidl.layers.operation import recordable
from minidl.losses.inputs import EPSILON, prepare


@recordable
def mean_squared_error(y_true, y_pred):
    """``mean((y_pred - y_true) ** 2)`` over the last axis."""
    return F.mse(*prepare('mean_squared_error', y_true, y_pred))


@recordable
def mean_absolute_error(y_true, y_pred):
    """``mean(|y_pred - y_true|)`` over the last axis."""
    return F.mae(*prepare('mean_absolute_error', y_true, y_pred))


@recordable
def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7))`` over the last axis."""
    y_true, y_pred = prepare('mean_absolute_percentage_error', y_true, y_pred)
    relative = F.abs((y_true - y_pred) / F.maximum(F.abs(y_true), EPSILON))
    return 100.0 * F.mean(relative, axis=-1)


@recordable
def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean((log(1 + max(y_pred, eps)) - log(1 + max(y_true, eps))) ** 2)``, last axis."""
    y_true, y_pred = prepare('mean_squared_logarithmic_error', y_true, y_pred)
    difference = F.log(F.maximum(y_pred, EPSILON) + 1.0) - F.log(F.maximum(y_true, EPSILON) + 1.0)
    return F.mean(difference * difference, axis=-1)


@recordable
def huber(y_true, y_pred, delta=1.0):
    """Huber loss averaged over the last axis: ``e**2 / 2`` within ``delta``, linear beyond."""
    return F.huber(*prepare('huber', y_true, y_pred), delta=delta)


@recordable
def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)))`` over the last axis, computed without overflow."""
    y_true, y_pred = prepare('log_cosh', y_true, y_pred)
    error = y_pred - y_true
    # log(cosh(x)) = x + log(1 + exp(-2x)) - log(2), finite for every x.
    return F.mean(error + F.softplus(-2.0 * error) - math.log(2.0), axis=-1)


def _l2_normalize(x, axis):
    return x / F.sqrt(F.maximum(F.sum(x * x, axis=axis, keepdims=True), 1e-12))


@recordable
def cosine_similarity(y_true, y_pred, axis=-1):
    """Negative cosine similarity along ``axis``, so that minimizing it aligns the vectors.

    Returns values in [-1, 1]: -1 for parallel vectors, 0 for orthogonal ones
    and where either vector is zero.
    """
    y_true, y_pred = prepare('cosine_similarity', y_true, y_pred)
    return -F.sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


@recordable
def cosine_proximity(y_true, y_pred):
    """Keras 2's name of the loss: the negative cosine similarity along the last axis.

    The same values as :func:`cosine_similarity` (Keras 2.2.4's formula,
    ``-sum(l2_normalize(y_true) * l2_normalize(y_pred))``), under the name
    Keras 2 scripts and files use, so it serializes as 'cosine_proximity'.
    """
    return cosine_similarity(y_true, y_pred)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
logcosh = log_cosh
cosine = cosine_proximity
