"""Reductions over axes: sum, mean, max, min, var, logsumexp.

Each takes ``axis`` (None for all axes, an int or a tuple) and ``keepdims``
as numpy does. Backward re-expands the reduced gradient by inserting the
reduced axes and broadcasting.
"""

from minidl.functions.axes import normalize_axes
from minidl.tensor import Function


class _Reduction(Function):
    """Shared bookkeeping: remembers the axes so gradients can be re-expanded."""

    def __init__(self, axis=None, keepdims=False):
        self.axis, self.keepdims = axis, keepdims

    def _setup(self, x):
        self.axes = normalize_axes(self.axis, x.shape, type(self).__name__.lower())
        self.input_shape = x.shape
        self.count = 1  # number of elements reduced into each output element
        for a in self.axes:
            self.count *= x.shape[a]

    def _expand(self, y):
        """``y`` (reduced) with the reduced axes restored as size-1 axes."""
        if self.keepdims:
            return y
        return y.reshape(tuple(1 if i in self.axes else n for i, n in enumerate(self.input_shape)))


class Sum(_Reduction):
    def forward(self, x):
        self._setup(x)
        return x.sum(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        return self.xp.broadcast_to(self._expand(grad), self.input_shape)


class Mean(_Reduction):
    def forward(self, x):
        self._setup(x)
        return x.mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        return self.xp.broadcast_to(self._expand(grad) / grad.dtype.type(self.count),
                                    self.input_shape)


class _Extremum(_Reduction):
    """Max or min; the gradient is shared equally among tied extreme elements."""

    reduce = None

    def forward(self, x):
        self._setup(x)
        y = getattr(x, self.reduce)(axis=self.axes, keepdims=True)
        self.selected = x == y
        return y if self.keepdims else y.reshape(
            tuple(n for i, n in enumerate(x.shape) if i not in self.axes))

    def backward(self, grad):
        ties = self.selected.sum(axis=self.axes, keepdims=True)
        return self.selected * (self._expand(grad) / ties.astype(grad.dtype))


class Max(_Extremum):
    reduce = 'max'


class Min(_Extremum):
    reduce = 'min'


class Var(_Reduction):
    """Variance with ``ddof`` delta degrees of freedom (0: the biased estimate)."""

    def __init__(self, axis=None, keepdims=False, ddof=0):
        super().__init__(axis, keepdims)
        self.ddof = ddof

    def forward(self, x):
        self._setup(x)
        if self.count <= self.ddof:
            raise ValueError(f'var with ddof={self.ddof} needs more than {self.ddof} elements '
                             f'per result; axis {self.axis!r} of shape {x.shape} has {self.count}')
        self.centered = x - x.mean(axis=self.axes, keepdims=True)
        return (self.centered ** 2).sum(axis=self.axes, keepdims=self.keepdims) \
            / x.dtype.type(self.count - self.ddof)

    def backward(self, grad):
        scale = grad.dtype.type(2.0 / (self.count - self.ddof))
        return self._expand(grad) * scale * self.centered


class LogSumExp(_Reduction):
    """``log(sum(exp(x)))``, shifted by the maximum for stability."""

    def forward(self, x):
        self._setup(x)
        xp = self.xp
        shift = x.max(axis=self.axes, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0)
        exps = xp.exp(x - shift)
        total = exps.sum(axis=self.axes, keepdims=True)
        self.softmax = exps / total
        y = xp.log(total) + shift
        return y if self.keepdims else y.reshape(
            tuple(n for i, n in enumerate(x.shape) if i not in self.axes))

    def backward(self, grad):
        return self._expand(grad) * self.softmax


def sum(x, axis=None, keepdims=False):
    """Sum of elements over ``axis``."""
    return Sum(axis, keepdims)(x)


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over ``axis``."""
    return Mean(axis, keepdims)(x)


def max(x, axis=None, keepdims=False):
    """Maximum over ``axis``; tied maxima share the gradient equally."""
    return Max(axis, keepdims)(x)


def min(x, axis=None, keepdims=False):
    """Minimum over ``axis``; tied minima share the gradient equally."""
    return Min(axis, keepdims)(x)


def var(x, axis=None, keepdims=False, ddof=0):
    """Variance over ``axis`` (``ddof=1`` for the unbiased estimate)."""
    return Var(axis, keepdims, ddof)(x)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))``, computed stably."""
    return LogSumExp(axis, keepdims)(x)
