"""Max and average pooling over 2-D windows, and their global versions.

Windowed pooling loops over the kh*kw window offsets: each offset pairs a
strided slice of the input with the slice of the output whose windows it
falls in (:func:`~minidl.functions.windows.offset_slices`, clipped to the real
input, so padding never needs a padded copy). Forward reduces those slices
into the output, backward adds the routed output gradient back into them:
kh*kw vectorised operations each way, no scatter-add.

Padding follows Keras/TensorFlow: padded cells never win a max and are not
counted by an average.

That is the reference code. 2-D pooling runs the vendor library's kernel
instead where one serves it (:mod:`minidl.compute.vendor`: oneDNN for float32
numpy arrays, cuDNN for CuPy arrays with the same padding on both sides);
``vendor_kernel`` shows which branch a call took (None: the reference code).
"""

import itertools
import math

import numpy as np

from minidl.compute import vendor
from minidl.functions.windows import as_tuple, offset_slices, output_size, resolve_padding
from minidl.tensor import Function


class _Pool2D(Function):
    """Shared geometry of the windowed pools: one (input, output) slice pair per offset.

    The window, strides and pads have one entry per spatial axis; two here,
    three in the 3-D subclasses.
    """

    KIND = None  # the vendor kernels' name for the pool: 'max' or 'average'
    vendor_kernel = None

    def __init__(self, window, strides, pads, channels_first):
        self.window, self.strides, self.pads = window, strides, pads
        self.channels_first = channels_first

    def forward(self, x):
        if len(self.window) == 2:  # the 3-D pools reuse these classes; the vendors serve 2-D
            self.vendor_kernel = vendor.kernel(
                self.xp, 'pool2d', x.dtype, kind=self.KIND, window=self.window,
                strides=self.strides, pads=self.pads, channels_first=self.channels_first)
        if self.vendor_kernel is not None:
            return self.vendor_kernel.forward(x)
        return self._forward_reference(x)

    def backward(self, grad):
        if self.vendor_kernel is not None:
            return self.vendor_kernel.backward(grad)
        return self._backward_reference(grad)

    def _spatial(self, shape):
        """The spatial sizes, (height, width), of an input or output shape."""
        return shape[2:] if self.channels_first else shape[1:-1]

    def _offsets(self, x_shape):
        """(input index, output index) pairs, one per window offset that touches the input."""
        sizes = self._spatial(x_shape)
        self.out_size = tuple(output_size(*args) for args in zip(
            sizes, self.pads, self.window, self.strides))
        axes = [offset_slices(size, pads, window, stride, 1, out)
                for size, pads, window, stride, out in zip(
                    sizes, self.pads, self.window, self.strides, self.out_size)]
        pairs = []
        for combo in itertools.product(*axes):  # row-major window order
            if any(pair is None for pair in combo):
                continue
            pairs.append((self._index(pair[0] for pair in combo),
                          self._index(pair[1] for pair in combo)))
        return pairs

    def _index(self, spatial):
        full = slice(None)
        return (full, full, *spatial) if self.channels_first else (full, *spatial, full)

    def _output_shape(self, x_shape):
        if self.channels_first:
            return x_shape[:2] + self.out_size
        return (x_shape[0],) + self.out_size + (x_shape[-1],)


class MaxPool2D(_Pool2D):
    """Max over each window. The gradient goes to the first maximum of the
    window in row-major window order (padded cells never win)."""

    KIND = 'max'

    def _forward_reference(self, x):
        xp = self.xp
        self.x_shape = x.shape
        self.offsets = self._offsets(x.shape)
        y = xp.full(self._output_shape(x.shape), -np.inf, dtype=x.dtype)
        if not self.needs_input_grad[0]:
            for source, target in self.offsets:
                best = y[target]
                xp.maximum(best, x[source], out=best)
            return y
        # argmax holds the offset index of each window's first maximum. Offsets
        # come in increasing order and only a strictly greater value replaces
        # the max, so "argmax = max(argmax, better * index)" records it with
        # plain arithmetic (masked assignment is several times slower).
        index_dtype = np.uint8 if len(self.offsets) <= 256 else np.int32
        self.argmax = xp.zeros(y.shape, dtype=index_dtype)
        for index, (source, target) in enumerate(self.offsets):
            window, best = x[source], y[target]
            better = window > best
            xp.maximum(best, window, out=best)
            xp.maximum(self.argmax[target], better * index_dtype(index),
                       out=self.argmax[target])
        return y

    def _backward_reference(self, grad):
        xp = self.xp
        # Windows that tile the input (stride = pool size, no padding) touch
        # each input cell once: write each offset's share in place (no
        # temporaries, no add) and zero only cells beyond the last window.
        tiled = self.strides == self.window and not any(any(pads) for pads in self.pads)
        whole = tiled and all(out * window == size for out, window, size in zip(
            self.out_size, self.window, self._spatial(self.x_shape)))
        grad_x = (xp.empty if whole else xp.zeros)(self.x_shape, dtype=grad.dtype)
        for index, (source, target) in enumerate(self.offsets):
            chosen = self.argmax[target] == index
            if tiled:
                xp.multiply(grad[target], chosen, out=grad_x[source])
            else:
                grad_x[source] += grad[target] * chosen
        return grad_x


class AvgPool2D(_Pool2D):
    """Mean over each window's cells that lie inside the input (padding excluded)."""

    KIND = 'average'

    def _forward_reference(self, x):
        xp = self.xp
        self.x_shape = x.shape
        self.offsets = self._offsets(x.shape)
        y = xp.zeros(self._output_shape(x.shape), dtype=x.dtype)
        for source, target in self.offsets:
            y[target] += x[source]
        self.count = self._count(x.dtype)
        y /= self.count
        return y

    def _count(self, dtype):
        """How many input cells each window covers: (1, OH, OW, 1)-broadcastable."""
        if not any(any(pads) for pads in self.pads):
            return dtype.type(math.prod(self.window))
        count = np.zeros(self.out_size, dtype=dtype)
        for _, target in self.offsets:
            count[target[2:] if self.channels_first else target[1:-1]] += 1
        count = count[None, None] if self.channels_first else count[None, ..., None]
        return self.xp.asarray(count)

    def _backward_reference(self, grad):
        xp = self.xp
        grad = grad / self.count
        grad_x = xp.zeros(self.x_shape, dtype=grad.dtype)
        for source, target in self.offsets:
            grad_x[source] += grad[target]
        return grad_x


class GlobalAvgPool2D(Function):
    """Mean over the spatial axes."""

    def __init__(self, channels_first, keepdims):
        self.axes = (2, 3) if channels_first else (1, 2)
        self.keepdims = keepdims

    def forward(self, x):
        self.x_shape = x.shape
        return x.mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        xp = self.xp
        scale = grad.dtype.type(1 / (self.x_shape[self.axes[0]] * self.x_shape[self.axes[1]]))
        grad = grad if self.keepdims else xp.expand_dims(grad, self.axes)
        grad_x = xp.empty(self.x_shape, dtype=grad.dtype)
        xp.multiply(grad, scale, out=grad_x)
        return grad_x


class GlobalMaxPool2D(Function):
    """Max over the spatial axes; the gradient goes to the first maximum in
    row-major (H, W) order, so ties are broken deterministically."""

    def __init__(self, channels_first, keepdims):
        self.channels_first, self.keepdims = channels_first, keepdims

    def forward(self, x):
        xp = self.xp
        self.x_shape = x.shape
        # Flatten the spatial axes into one: (N, C, H*W) or (N, H*W, C).
        axis = 2 if self.channels_first else 1
        flat = x.reshape(x.shape[:2] + (-1,)) if self.channels_first \
            else x.reshape(x.shape[0], -1, x.shape[3])
        self.argmax = xp.expand_dims(flat.argmax(axis=axis), axis)
        self.flat_shape = flat.shape
        y = xp.take_along_axis(flat, self.argmax, axis=axis)
        return self._reshape_output(y)

    def _reshape_output(self, y):
        if self.keepdims:
            return y[..., None] if self.channels_first else y[:, :, None]
        return y[:, :, 0] if self.channels_first else y[:, 0]

    def backward(self, grad):
        xp = self.xp
        axis = 2 if self.channels_first else 1
        grad = grad.reshape(self.argmax.shape)
        positions = xp.arange(self.flat_shape[axis]).reshape(
            (1, 1, -1) if self.channels_first else (1, -1, 1))
        zero = grad.dtype.type(0)
        return xp.where(positions == self.argmax, grad, zero).reshape(self.x_shape)


def _shape(value):
    return tuple(value.shape) if hasattr(value, 'shape') else np.shape(value)


def pool(function_class, name, x, pool_size, strides, padding, data_format, rank=2):
    """Check Keras's pooling arguments for ``rank`` spatial axes and apply ``function_class``."""
    if data_format not in ('channels_last', 'channels_first'):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f'got {data_format!r}')
    channels_first = data_format == 'channels_first'
    x_shape = _shape(x)
    if len(x_shape) != rank + 2:
        raise ValueError(f'{name} expects a {rank + 2}-D input, got shape {x_shape}')
    window = as_tuple(pool_size, rank, 'pool_size')
    strides = window if strides is None else as_tuple(strides, rank, 'strides')
    sizes = x_shape[2:] if channels_first else x_shape[1:-1]
    pads = resolve_padding(padding, sizes, window, strides)
    if any(pad >= size for pair, size in zip(pads, window) for pad in pair):
        raise ValueError(f'{name}: padding {pads} must be smaller than pool_size {window} '
                         f'on each side, or some windows would hold only padding')
    if any(output_size(*args) < 1 for args in zip(sizes, pads, window, strides)):
        raise ValueError(f'{name}: pool_size {window} does not fit in input {x_shape} '
                         f'with padding {pads}')
    return function_class(window, strides, pads, channels_first)(x)


def max_pool2d(x, pool_size=2, strides=None, padding='valid', data_format='channels_last'):
    """Max pooling over 2-D windows.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        pool_size: Int or (rows, cols) window size.
        strides: Int or pair; defaults to ``pool_size`` (as in Keras).
        padding: 'valid', 'same' (TensorFlow's: ``ceil(size / stride)``
            outputs), an int, a pair (rows, cols) or ((top, bottom), (left, right)).
            Padded cells never win the max; each side must be < pool_size.
        data_format: 'channels_last' or 'channels_first'.

    Returns:
        Tensor (N, OH, OW, C) or (N, C, OH, OW). Its gradient goes to the
        first maximum of each window (row-major order).
    """
    return pool(MaxPool2D, 'max_pool2d', x, pool_size, strides, padding, data_format)


def avg_pool2d(x, pool_size=2, strides=None, padding='valid', data_format='channels_last'):
    """Average pooling over 2-D windows.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        pool_size: Int or (rows, cols) window size.
        strides: Int or pair; defaults to ``pool_size`` (as in Keras).
        padding: As for :func:`max_pool2d`. Padded cells are left out of
            each window's count, as in Keras/TensorFlow.
        data_format: 'channels_last' or 'channels_first'.

    Returns:
        Tensor (N, OH, OW, C) or (N, C, OH, OW).
    """
    return pool(AvgPool2D, 'avg_pool2d', x, pool_size, strides, padding, data_format)


def _global_pool(function_class, name, x, data_format, keepdims):
    if data_format not in ('channels_last', 'channels_first'):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f'got {data_format!r}')
    if len(_shape(x)) != 4:
        raise ValueError(f'{name} expects a 4-D input, got shape {_shape(x)}')
    return function_class(data_format == 'channels_first', keepdims)(x)


def global_avg_pool2d(x, data_format='channels_last', keepdims=False):
    """Mean over the spatial axes.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        data_format: 'channels_last' or 'channels_first'.
        keepdims: Keep the spatial axes with size 1.

    Returns:
        Tensor (N, C), or (N, 1, 1, C) / (N, C, 1, 1) with ``keepdims``.
    """
    return _global_pool(GlobalAvgPool2D, 'global_avg_pool2d', x, data_format, keepdims)


def global_max_pool2d(x, data_format='channels_last', keepdims=False):
    """Max over the spatial axes.

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        data_format: 'channels_last' or 'channels_first'.
        keepdims: Keep the spatial axes with size 1.

    Returns:
        Tensor (N, C), or (N, 1, 1, C) / (N, C, 1, 1) with ``keepdims``. On
        ties the whole gradient goes to the first maximum in row-major
        (H, W) order.
    """
    return _global_pool(GlobalMaxPool2D, 'global_max_pool2d', x, data_format, keepdims)
