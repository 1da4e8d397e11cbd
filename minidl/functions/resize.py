"""Bilinear upsampling by integer factors, as Keras 2.2.4's bilinear ``UpSampling2D``.

Keras 2.2.4's TensorFlow backend (``resize_images``) calls TensorFlow 1's
``tf.image.resize_bilinear`` with its defaults (``align_corners=False``,
no half-pixel centers). Along each axis, output cell ``o`` of ``out = in*f``
cells reads the source coordinate ``o * in / out = o / f``, not the
half-pixel-centred ``(o + 0.5) / f - 0.5`` of newer TensorFlow and PyTorch:
with ``i = floor(o / f)`` and weight ``w = o / f - i = (o mod f) / f``,

    out[o] = (1 - w) * x[i] + w * x[min(i + 1, in - 1)],

so the first cell of each group of ``f`` copies a source cell and the last
source cell is repeated at the end. The two axes are interpolated one after
the other (bilinear interpolation is separable). TensorFlow forms the
coordinate in float32 (``o * (in / out)``); here ``i`` and ``w`` are exact,
so results may differ from TensorFlow's by float32 rounding only.
"""

from minidl.functions.windows import as_pair
from minidl.tensor import Function


def _shifted_next(xp, x, axis):
    """``x`` with each cell along ``axis`` replaced by the next one, the last one kept."""
    index = [slice(None)] * x.ndim
    index[axis] = slice(1, None)
    last = [slice(None)] * x.ndim
    last[axis] = slice(-1, None)
    return xp.concatenate([x[tuple(index)], x[tuple(last)]], axis=axis)


class UpsampleBilinear2D(Function):
    """Bilinear upsampling of the two spatial ``axes`` of ``x`` by integer ``factors``."""

    def __init__(self, factors, axes):
        self.factors, self.axes = factors, axes

    def _weights(self, factor, axis, ndim, dtype):
        """The weights ``(o mod f) / f``, shaped to broadcast on the axis after ``axis``."""
        shape = [1] * (ndim + 1)
        shape[axis + 1] = factor
        return (self.xp.arange(factor, dtype=dtype) / dtype.type(factor)).reshape(shape)

    def forward(self, x):
        xp = self.xp
        for factor, axis in zip(self.factors, self.axes):
            if factor == 1:
                continue
            weights = self._weights(factor, axis, x.ndim, x.dtype)
            here = xp.expand_dims(x, axis + 1)
            after = xp.expand_dims(_shifted_next(xp, x, axis), axis + 1)
            grouped = here + (after - here) * weights  # (..., in, f, ...)
            shape = list(x.shape)
            shape[axis] *= factor
            x = grouped.reshape(shape)
        return x

    def backward(self, grad):
        for factor, axis in reversed(list(zip(self.factors, self.axes))):
            if factor == 1:
                continue
            shape = list(grad.shape)
            shape[axis:axis + 1] = [shape[axis] // factor, factor]
            grouped = grad.reshape(shape)
            weights = self._weights(factor, axis, grad.ndim, grad.dtype)
            to_next = (grouped * weights).sum(axis=axis + 1)
            grad = grouped.sum(axis=axis + 1) - to_next
            # Each cell's share for its next cell goes one cell on; the last keeps its own.
            index = [slice(None)] * grad.ndim
            index[axis] = slice(1, None)
            head = [slice(None)] * grad.ndim
            head[axis] = slice(None, -1)
            grad[tuple(index)] += to_next[tuple(head)]
            index[axis] = slice(-1, None)
            head[axis] = slice(-1, None)
            grad[tuple(index)] += to_next[tuple(head)]
        return grad


def upsample_bilinear2d(x, size, data_format='channels_last'):
    """Bilinear upsampling of images by integer factors (Keras 2.2.4 / TensorFlow 1's rule).

    Args:
        x: Input, (N, H, W, C) or (N, C, H, W) for 'channels_first'.
        size: Int or (rows, cols) factors.
        data_format: 'channels_last' or 'channels_first'.

    Returns:
        Tensor (N, H*rows, W*cols, C) or (N, C, H*rows, W*cols); see the
        module docstring for the interpolation rule.
    """
    if data_format not in ('channels_last', 'channels_first'):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', "
                         f'got {data_format!r}')
    if len(getattr(x, 'shape', ())) != 4:
        raise ValueError(f'upsample_bilinear2d expects a 4-D input, got shape '
                         f'{getattr(x, "shape", None)}')
    axes = (2, 3) if data_format == 'channels_first' else (1, 2)
    return UpsampleBilinear2D(as_pair(size, 'size'), axes)(x)
