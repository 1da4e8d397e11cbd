"""Batch normalization and layer normalization.

``batch_norm`` follows Keras's ``BatchNormalization``: the channel axis is kept
and every other axis is normalised; in training mode the batch statistics are
used and the running statistics are updated in place with Keras's momentum
convention, in inference mode the running statistics are used.

That is the reference code. Batch normalization runs the vendor library's
kernel instead where one serves it (:mod:`minidl.compute.vendor`: oneDNN for
float32 numpy arrays of up to five axes, cuDNN for CuPy arrays); the
inference form only when no input needs a gradient. ``vendor_kernel`` shows
which branch a call took (None: the reference code).
"""

import math

import numpy as np

from minidl.compute import get_array_module, is_array, vendor
from minidl.compute.donation import may_overwrite
from minidl.compute.pool import map_tasks, row_blocks, sum_in_order
from minidl.functions.axes import normalize_axis
from minidl.tensor import Function, Tensor


class _Channels:
    """Per-channel sums and broadcasts of arrays shaped like ``shape``.

    An array is viewed as (outer, C, inner) around the channel axis and reduced
    over outer and inner at once, with no transpose for either layout.
    Channels-last arrays (inner == 1) with few channels are viewed as rows of
    several whole pixels, (outer / k, k * C), with per-channel vectors tiled k
    times: numpy's loops over rows of only C elements are several times slower.
    """

    ROW_WIDTH = 512  # the widest row that channels-last views are widened to

    def __init__(self, xp, shape, axis):
        self.xp = xp
        axis %= len(shape)
        self.channels = shape[axis]
        outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
        self.count = outer * inner
        self.tiles = 0
        if inner == 1:
            self.tiles = 1
            while (2 * self.tiles * self.channels <= self.ROW_WIDTH
                   and outer % (2 * self.tiles) == 0):
                self.tiles *= 2
            self.view_shape = (outer // self.tiles, self.tiles * self.channels)
        else:
            self.view_shape = (outer, self.channels, inner)

    def view(self, array):
        return array.reshape(self.view_shape)

    def expand(self, vector):
        """A per-channel vector (C,) shaped to broadcast against the view."""
        return self.xp.tile(vector, self.tiles) if self.tiles else vector[:, None]

    def sum(self, array):
        """Per-channel sum of a viewed array."""
        if self.tiles:
            return self.xp.einsum('ij->j', array).reshape(self.tiles, self.channels).sum(axis=0)
        return self.xp.einsum('ocb->c', array)

    def dot(self, a, b):
        """Per-channel sum of ``a * b`` for two viewed arrays, without a temporary."""
        if self.tiles:
            return self.xp.einsum('ij,ij->j', a, b).reshape(self.tiles, self.channels).sum(axis=0)
        # A stack of (1, inner) @ (inner, 1) products: faster than einsum for long rows.
        return (a[:, :, None, :] @ b[:, :, :, None]).sum(axis=(0, 2, 3))


class BatchNorm(Function):
    """Batch normalization with the statistics of the batch (training mode).

    Inputs: x, gamma (C,), beta (C,). The batch mean and biased variance stay
    on the function as ``mean`` and ``variance`` for the running statistics.
    """

    vendor_kernel = None

    def __init__(self, axis, epsilon):
        self.axis, self.epsilon = axis, epsilon

    def forward(self, x, gamma, beta):
        self.vendor_kernel = vendor.kernel(self.xp, 'batch_norm', x.dtype, kind='training',
                                           shape=x.shape, axis=self.axis, epsilon=self.epsilon)
        if self.vendor_kernel is not None:
            y = self.vendor_kernel.forward(x, gamma, beta)
            self.mean, self.variance = self.vendor_kernel.mean, self.vendor_kernel.variance
            return y
        return self._forward_reference(x, gamma, beta)

    def backward(self, grad):
        if self.vendor_kernel is not None:
            return self.vendor_kernel.backward(grad, self.needs_input_grad)
        return self._backward_reference(grad)

    def _forward_reference(self, x, gamma, beta):
        xp = self.xp
        channels = self.channels = _Channels(xp, x.shape, self.axis)
        x_view = channels.view(x)
        # Each pass runs over blocks of rows on the worker threads; per-block
        # sums are added in block order.
        blocks = row_blocks(x_view)
        self.mean = sum_in_order(map_tasks(lambda rows: channels.sum(x_view[rows]), blocks, xp))
        self.mean /= channels.count
        # Two passes (mean, then squared deviations): E[x^2] - E[x]^2 cancels badly in float32.
        centered = self.centered = xp.empty_like(x_view)
        mean = channels.expand(self.mean)

        def center(rows):
            xp.subtract(x_view[rows], mean, out=centered[rows])
            return channels.dot(centered[rows], centered[rows])

        self.variance = sum_in_order(map_tasks(center, blocks, xp)) / channels.count
        self.inv_std = 1 / xp.sqrt(self.variance + self.epsilon)
        self.gamma = gamma
        y = _affine(xp, centered, channels.expand(gamma * self.inv_std), channels.expand(beta))
        return y.reshape(x.shape)

    def _backward_reference(self, grad):
        xp, channels, centered, inv_std = self.xp, self.channels, self.centered, self.inv_std
        grad_view = channels.view(grad)
        blocks = row_blocks(grad_view)
        sums = map_tasks(lambda rows: (channels.sum(grad_view[rows]),
                                        channels.dot(grad_view[rows], centered[rows])),
                          blocks, xp)
        grad_beta = sum_in_order([part for part, _ in sums])
        grad_gamma = sum_in_order([part for _, part in sums]) * inv_std
        grad_x = None
        if self.needs_input_grad[0]:
            # dx = gamma * inv_std * (g - mean(g) - x_hat * mean(g * x_hat)), as a per-channel
            # combination of g, centered and 1 so that nothing of x's size is made twice.
            scale = self.gamma * inv_std
            grad_scale = channels.expand(scale)
            centered_scale = channels.expand(scale * inv_std * grad_gamma / channels.count)
            offset = channels.expand(scale * grad_beta / channels.count)
            grad_x = xp.empty(grad_view.shape, xp.result_type(grad_view, grad_scale))

            def combine(rows):
                out = grad_x[rows]
                xp.multiply(grad_view[rows], grad_scale, out=out)
                out -= centered[rows] * centered_scale
                out -= offset

            map_tasks(combine, blocks, xp)
            grad_x = grad_x.reshape(grad.shape)
        return (grad_x,
                grad_gamma if self.needs_input_grad[1] else None,
                grad_beta if self.needs_input_grad[2] else None)


class BatchNormInference(Function):
    """Batch normalization with fixed statistics: a per-channel affine map.

    Inputs: x, gamma, beta, mean, variance, each but x of shape (C,).
    """

    vendor_kernel = None

    def __init__(self, axis, epsilon):
        self.axis, self.epsilon = axis, epsilon

    def forward(self, x, gamma, beta, mean, variance):
        # A model's inference may donate x (minidl.compute.donation): y then replaces it
        # where it lies, still in the cache, with the same values.
        in_place = False
        if not any(self.needs_input_grad):  # the vendors' inference kernels have no backward
            in_place = self.xp is np and may_overwrite(x)
            self.vendor_kernel = vendor.kernel(
                self.xp, 'batch_norm', x.dtype, kind='inference', shape=x.shape, axis=self.axis,
                epsilon=self.epsilon)
            if self.vendor_kernel is not None:
                if in_place:
                    return self.vendor_kernel.forward(x, gamma, beta, mean, variance,
                                                      in_place=True)
                return self.vendor_kernel.forward(x, gamma, beta, mean, variance)
        channels = self.channels = _Channels(self.xp, x.shape, self.axis)
        self.x_view = channels.view(x)
        self.gamma, self.mean = gamma, mean
        self.inv_std = 1 / self.xp.sqrt(variance + self.epsilon)
        self.scale = gamma * self.inv_std
        scale, shift = channels.expand(self.scale), channels.expand(beta - mean * self.scale)
        in_place = in_place and self.xp.result_type(x, scale, shift) == x.dtype
        y = _affine(self.xp, self.x_view, scale, shift, out=self.x_view if in_place else None)
        return y.reshape(x.shape)

    def backward(self, grad):
        channels, needs = self.channels, self.needs_input_grad
        grad_view = channels.view(grad)
        grad_x = grad_gamma = grad_beta = grad_mean = grad_variance = None
        if needs[0]:
            grad_x = (grad_view * channels.expand(self.scale)).reshape(grad.shape)
        if needs[2] or needs[3]:
            grad_beta = channels.sum(grad_view)
            grad_mean = -grad_beta * self.scale
        if needs[1] or needs[4]:
            centered = self.x_view - channels.expand(self.mean)
            grad_gamma = channels.dot(grad_view, centered) * self.inv_std
            grad_variance = -0.5 * grad_gamma * self.gamma * self.inv_std ** 2
        return (grad_x,
                grad_gamma if needs[1] else None,
                grad_beta if needs[2] else None,
                grad_mean if needs[3] else None,
                grad_variance if needs[4] else None)


class LayerNorm(Function):
    """Normalization of each sample over ``axes``; gamma and beta shaped like those axes."""

    def __init__(self, axes, epsilon):
        self.axes, self.epsilon = axes, epsilon

    def forward(self, x, gamma, beta):
        axes = self.axes
        # gamma's shape with ones inserted at the other axes, to broadcast against x.
        param_shape = tuple(size if i in axes else 1 for i, size in enumerate(x.shape))
        self.param_input_shape = gamma.shape
        self.gamma = gamma.reshape(param_shape)
        normalized = x - x.mean(axis=axes, keepdims=True)
        variance = self.xp.square(normalized).mean(axis=axes, keepdims=True)
        self.inv_std = 1 / self.xp.sqrt(variance + self.epsilon)
        normalized *= self.inv_std
        self.normalized = normalized
        y = normalized * self.gamma
        y += beta.reshape(param_shape)
        return y

    def backward(self, grad):
        normalized, axes, needs = self.normalized, self.axes, self.needs_input_grad
        other_axes = tuple(i for i in range(grad.ndim) if i not in axes)
        grad_x = grad_gamma = grad_beta = None
        if needs[0]:
            scaled = grad * self.gamma
            grad_x = scaled - scaled.mean(axis=axes, keepdims=True)
            scaled *= normalized
            grad_x -= normalized * scaled.mean(axis=axes, keepdims=True)
            grad_x *= self.inv_std
        if needs[1]:
            grad_gamma = (grad * normalized).sum(axis=other_axes).reshape(self.param_input_shape)
        if needs[2]:
            grad_beta = grad.sum(axis=other_axes).reshape(self.param_input_shape)
        return grad_x, grad_gamma, grad_beta


def batch_norm(x, gamma, beta, running_mean, running_var, training, momentum=0.99,
               epsilon=1e-3, axis=-1):
    """Batch normalization over every axis of ``x`` except the channel ``axis``.

    In training mode ``x`` is normalised with the batch mean and biased
    variance, and the running statistics are updated in place, Keras's way:
    ``running = running * momentum + batch_statistic * (1 - momentum)``. The
    running variance receives the unbiased batch variance (times n / (n - 1),
    n values per channel, as PyTorch and TensorFlow's fused kernel do; n = 1
    gives the biased one). In inference mode the running statistics are used.

    Args:
        x: Input tensor, at least 2-D.
        gamma: Scale of shape (C,), or None for no scale.
        beta: Offset of shape (C,), or None for no offset.
        running_mean: Running mean (C,): a tensor without gradient or an
            array; updated in place in training mode. May be None in training
            mode, then no running statistics are kept.
        running_var: Running variance (C,), like ``running_mean``.
        training: Use (and record) the batch statistics rather than the
            running ones.
        momentum: Weight of the old running statistics in the update.
        epsilon: Added to the variance before the square root.
        axis: The channel axis: -1 for channels_last, 1 for channels_first.

    Returns:
        The normalised tensor, shaped like ``x``.
    """
    x = _as_tensor_or_array(x)
    shape = _shape_of(x)
    if len(shape) < 2:
        raise ValueError(f'batch_norm needs an input of at least 2 dimensions, got shape {shape}')
    axis = normalize_axis(axis, shape, 'batch_norm')
    channels = shape[axis]
    gamma, beta = _params(x, gamma, beta, (channels,), 'batch_norm')
    if not training and (running_mean is None or running_var is None):
        raise ValueError('batch_norm in inference mode needs running_mean and running_var')
    for name, value in (('running_mean', running_mean), ('running_var', running_var)):
        if value is None:
            continue
        if not (isinstance(value, Tensor) or is_array(value)):
            raise TypeError(f'batch_norm: {name} must be a Tensor or an array (it is updated '
                            f'in place), got {type(value).__name__}')
        if value.shape != (channels,):
            raise ValueError(f'batch_norm: {name} has shape {value.shape}, expected '
                             f'({channels},) for input {shape} with channel axis {axis}')
    if not training:
        return BatchNormInference(axis, epsilon)(x, gamma, beta, running_mean, running_var)

    count = math.prod(shape) // channels
    if count == 0:
        raise ValueError(f'batch_norm in training mode got an empty batch, shape {shape}')
    function = BatchNorm(axis, epsilon)
    y = function(x, gamma, beta)
    if running_mean is not None:
        _update_running(running_mean, function.mean, momentum)
    if running_var is not None:
        _update_running(running_var, function.variance * (count / max(count - 1, 1)), momentum)
    return y


def layer_norm(x, gamma, beta, axis=-1, epsilon=1e-3):
    """Normalise each sample of ``x`` over ``axis``, then scale and offset.

    Args:
        x: Input tensor.
        gamma: Scale shaped like the normalised axes (``x.shape[a]`` for each
            ``a`` in ``axis``, in increasing order), or None for no scale.
        beta: Offset shaped like ``gamma``, or None for no offset.
        axis: Axis or tuple of axes to normalise over.
        epsilon: Added to the variance before the square root.

    Returns:
        The normalised tensor, shaped like ``x``.
    """
    x = _as_tensor_or_array(x)
    shape = _shape_of(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(sorted({normalize_axis(a, shape, 'layer_norm') for a in axes}))
    if not axes:
        raise ValueError('layer_norm needs at least one axis to normalise over')
    gamma, beta = _params(x, gamma, beta, tuple(shape[a] for a in axes), 'layer_norm')
    return LayerNorm(axes, epsilon)(x, gamma, beta)


def _as_tensor_or_array(value):
    """Tensors and arrays as they are; nested Python numbers as a Tensor."""
    return value if isinstance(value, Tensor) or is_array(value) else Tensor(value)


def _shape_of(value):
    return tuple(value.shape) if hasattr(value, 'shape') else np.shape(value)


def _params(x, gamma, beta, shape, name):
    """gamma and beta checked against ``shape``; ones and zeros stand in for None."""
    for param_name, value in (('gamma', gamma), ('beta', beta)):
        if value is not None and _shape_of(value) != shape:
            raise ValueError(f'{name}: {param_name} has shape {_shape_of(value)}, expected '
                             f'{shape} for input {_shape_of(x)}')
    data = x.data if isinstance(x, Tensor) else x
    xp = get_array_module(data)
    gamma = xp.ones(shape, data.dtype) if gamma is None else gamma
    beta = xp.zeros(shape, data.dtype) if beta is None else beta
    return gamma, beta


def _affine(xp, x, scale, shift, out=None):
    """``x * scale + shift`` (per-channel factors broadcast on ``x``), over blocks of rows
    on the worker threads, into ``out`` (which may be ``x``) or a new array."""
    y = xp.empty(x.shape, xp.result_type(x, scale, shift)) if out is None else out

    def block(rows):
        xp.multiply(x[rows], scale, out=y[rows])
        y[rows] += shift

    map_tasks(block, row_blocks(x), xp)
    return y


def _update_running(running, batch_statistic, momentum):
    """``running = running * momentum + batch_statistic * (1 - momentum)``, in place."""
    array = running.data if isinstance(running, Tensor) else running
    array *= momentum
    array += (batch_statistic * (1 - momentum)).astype(array.dtype, copy=False)
