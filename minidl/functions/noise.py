"""Dropout, with its mask drawn from an explicit random generator."""

import numbers

from minidl.compute import default_generator
from minidl.tensor import Function


class Dropout(Function):
    """Inverted dropout: zero each element with probability ``rate``, scale the rest up."""

    def __init__(self, rate, generator, noise_shape):
        self.rate, self.generator, self.noise_shape = rate, generator, noise_shape

    def forward(self, x):
        keep = 1 - self.rate
        shape = x.shape if self.noise_shape is None else _mask_shape(self.noise_shape, x.shape)
        self.mask = self.generator.bernoulli(shape, keep, xp=self.xp)
        self.scale = 1 / keep
        y = x * self.scale
        y *= self.mask
        return y

    def backward(self, grad):
        grad = grad * self.scale
        grad *= self.mask
        return grad


def _mask_shape(noise_shape, shape):
    """Keras's ``noise_shape``: None entries take the input's size; others are 1 or equal to it."""
    if len(noise_shape) != len(shape):
        raise ValueError(f'dropout: noise_shape {tuple(noise_shape)} does not have the '
                         f'{len(shape)} dimensions of the input of shape {shape}')
    mask_shape = tuple(size if entry is None else int(entry)
                       for entry, size in zip(noise_shape, shape))
    if any(entry not in (1, size) for entry, size in zip(mask_shape, shape)):
        raise ValueError(f'dropout: noise_shape {tuple(noise_shape)} must be 1 or the input '
                         f'size in each dimension; the input has shape {shape}')
    return mask_shape


def dropout(x, rate, generator=None, training=True, noise_shape=None):
    """Randomly zero elements of ``x``, scaling the kept ones by ``1 / (1 - rate)``.

    Args:
        x: Input tensor.
        rate: Fraction of the elements to drop, in [0, 1).
        generator: The :class:`minidl.compute.Generator` that draws the mask;
            defaults to ``minidl.compute.default_generator()``.
        training: When false, return ``x`` unchanged.
        noise_shape: Shape of the mask, broadcast against ``x`` (Keras's
            ``noise_shape``: each entry 1, the input's size, or None for the
            input's size), to drop whole rows or channels at once.

    Returns:
        A tensor of the shape of ``x``; ``x`` itself, with nothing drawn, when
        ``training`` is false or ``rate`` is 0.

    Raises:
        ValueError: If ``rate`` is not in [0, 1) or ``noise_shape`` does not fit ``x``.
    """
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate < 1:
        raise ValueError(f'dropout: rate must be a number in [0, 1), got {rate!r}')
    if not training or rate == 0:
        return x
    generator = default_generator() if generator is None else generator
    return Dropout(float(rate), generator, noise_shape)(x)
