"""Products and running totals along axes: prod, cumsum, cumprod.

Their gradients stay exact where the input holds zeros: backward never
divides by an input element (the product of "all the other elements" is
built from prefix and suffix products instead).
"""

from minidl.functions.axes import normalize_axis
from minidl.functions.reduction import _Reduction
from minidl.tensor import Function


class Prod(_Reduction):
    """Product of the elements over ``axis``."""

    def forward(self, x):
        self._setup(x)
        self.x = x
        return x.prod(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        xp, x, axes = self.xp, self.x, self.axes
        if self.count == 0:
            return xp.zeros(x.shape, grad.dtype)
        kept = [axis for axis in range(x.ndim) if axis not in axes]
        order = kept + list(axes)
        kept_shape = tuple(x.shape[axis] for axis in kept)
        # The reduced axes moved last and merged: one row of `count` factors per output.
        rows = x.transpose(order).reshape(kept_shape + (self.count,))
        ones = xp.ones(kept_shape + (1,), x.dtype)
        before = xp.cumprod(xp.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)
        reversed_rows = rows[..., ::-1]
        after = xp.cumprod(xp.concatenate([ones, reversed_rows[..., :-1]], axis=-1), axis=-1)
        others = before * after[..., ::-1]
        others *= self._expand(grad).transpose(order).reshape(kept_shape + (1,))
        inverse = [0] * x.ndim
        for position, axis in enumerate(order):
            inverse[axis] = position
        moved_shape = tuple(x.shape[axis] for axis in order)
        return others.reshape(moved_shape).transpose(inverse)


class CumSum(Function):
    """Running sum along ``axis``."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        self.axis = normalize_axis(self.axis, x.shape, 'cumsum')
        return self.xp.cumsum(x, axis=self.axis)

    def backward(self, grad):
        return _reverse_cumsum(self.xp, grad, self.axis)


class CumProd(Function):
    """Running product along ``axis``."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        self.axis = normalize_axis(self.axis, x.shape, 'cumprod')
        self.x = x
        self.y = self.xp.cumprod(x, axis=self.axis)
        return self.y

    def backward(self, grad):
        xp, x, axis = self.xp, self.x, self.axis
        zero = x == 0
        # d y_j / d x_i = y_j / x_i for j >= i, where x_i is not zero.
        grad_x = _reverse_cumsum(xp, grad * self.y, axis) / xp.where(zero, 1, x)
        # Past the first zero of a row every y_j is 0, and so is every derivative
        # with respect to a later zero; the first zero's own derivative is that of
        # the running product with this factor taken as 1.
        first_zero = zero & (xp.cumsum(zero, axis=axis) == 1)
        running = xp.cumprod(xp.where(first_zero, 1, x), axis=axis)
        grad_first = _reverse_cumsum(xp, grad * running, axis)
        return xp.where(first_zero, grad_first, xp.where(zero, 0, grad_x))


def _reverse_cumsum(xp, array, axis):
    """Sums from each position to the end of ``axis``."""
    return xp.flip(xp.cumsum(xp.flip(array, axis=axis), axis=axis), axis=axis)


def prod(x, axis=None, keepdims=False):
    """Product of elements over ``axis`` (None for all)."""
    return Prod(axis, keepdims)(x)


def cumsum(x, axis=0):
    """Running sum along ``axis``."""
    return CumSum(axis)(x)


def cumprod(x, axis=0):
    """Running product along ``axis``."""
    return CumProd(axis)(x)
