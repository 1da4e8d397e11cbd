"""Batch normalization from given statistics, and from the batch's own."""

import minidl.functions as F
from minidl.backend.convert import as_tensor
from minidl.layers.operation import recordable


@recordable
def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta``.

    The statistics broadcast against ``x``; 1-D ones lie along ``axis``.
    ``beta`` and ``gamma`` may be None (0 and 1).
    """
    x = as_tensor(x)
    mean, var = _along(mean, x, axis), _along(var, x, axis)
    normed = (x - mean) / F.sqrt(var + epsilon)
    if gamma is not None:
        normed = normed * _along(gamma, x, axis)
    if beta is not None:
        normed = normed + _along(beta, x, axis)
    return normed


@recordable
def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """Normalize ``x`` by its mean and variance over ``reduction_axes``.

    Args:
        x: Input tensor.
        gamma: Scale of the kept axes' shape (e.g. (channels,)), or None.
        beta: Offset of that shape, or None.
        reduction_axes: The axes averaged over, e.g. [0, 1, 2] for NHWC images.
        epsilon: Added to the variance.

    Returns:
        ``(normalized, mean, variance)``, the statistics without the reduced axes.
    """
    x = as_tensor(x)
    axes = tuple(a % x.ndim for a in reduction_axes)
    mean = F.mean(x, axis=axes, keepdims=True)
    var = F.var(x, axis=axes, keepdims=True)
    kept = mean.shape
    normed = (x - mean) / F.sqrt(var + epsilon)
    if gamma is not None:
        normed = normed * F.reshape(as_tensor(gamma), kept)
    if beta is not None:
        normed = normed + F.reshape(as_tensor(beta), kept)
    reduced = tuple(size for axis, size in enumerate(kept) if axis not in axes)
    return normed, F.reshape(mean, reduced), F.reshape(var, reduced)


def _along(statistic, x, axis):
    """A 1-D ``statistic`` shaped to broadcast along ``axis`` of ``x``; others as they are."""
    statistic = as_tensor(statistic)
    if statistic.ndim != 1 or x.ndim < 2:
        return statistic
    shape = [1] * x.ndim
    shape[axis % x.ndim] = statistic.shape[0]
    return F.reshape(statistic, tuple(shape))
