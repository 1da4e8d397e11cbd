"""Elementwise arithmetic and matrix multiplication.

Binary functions broadcast like numpy; the engine sums their gradients back to
each input's shape.
"""

import numpy as np

from minidl.compute.donation import may_overwrite
from minidl.tensor import Function


def _donated_out(a, b):
    """The donated one of ``a`` and ``b`` that can hold ``a + b`` (its shape and dtype,
    writeable), or None."""
    shape, dtype = np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b)
    for array in (a, b):
        if (may_overwrite(array) and array.shape == shape and array.dtype == dtype
                and array.flags.writeable):
            return array
    return None


class Add(Function):
    def forward(self, a, b):
        # A model's inference may donate an input (minidl.compute.donation): the sum then
        # goes over it, where it is of the result's shape and dtype (the same values).
        if may_overwrite(a) or may_overwrite(b):
            out = _donated_out(a, b) if not any(self.needs_input_grad) else None
            if out is not None:
                return self.xp.add(a, b, out=out)
        return a + b

    def backward(self, grad):
        return grad, grad


class Sub(Function):
    def forward(self, a, b):
        return a - b

    def backward(self, grad):
        return grad, -grad


class Mul(Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, grad):
        return grad * self.b, grad * self.a


class Div(Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a / b

    def backward(self, grad):
        grad_a = grad / self.b
        grad_b = -grad_a * self.a / self.b if self.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """``a ** b`` for tensors ``a`` and ``b`` (``b`` usually a constant)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        self.y = a ** b
        return self.y

    def backward(self, grad):
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = grad * self.b * self.a ** (self.b - 1)
        if self.needs_input_grad[1]:
            # d(a^b)/db = a^b log a, defined where a > 0.
            log_a = self.xp.log(self.xp.where(self.a > 0, self.a, 1))
            grad_b = grad * self.y * log_a
        return grad_a, grad_b


class Neg(Function):
    def forward(self, x):
        return -x

    def backward(self, grad):
        return -grad


class Exp(Function):
    def forward(self, x):
        self.y = self.xp.exp(x)
        return self.y

    def backward(self, grad):
        return grad * self.y


class Log(Function):
    def forward(self, x):
        self.x = x
        return self.xp.log(x)

    def backward(self, grad):
        return grad / self.x


class Sqrt(Function):
    def forward(self, x):
        self.y = self.xp.sqrt(x)
        return self.y

    def backward(self, grad):
        return grad / (2 * self.y)


class Abs(Function):
    def forward(self, x):
        self.x = x
        return self.xp.abs(x)

    def backward(self, grad):
        return grad * self.xp.sign(self.x)


class Maximum(Function):
    """Elementwise maximum; on ties the gradient goes to the first input."""

    def forward(self, a, b):
        self.first = a >= b
        return self.xp.maximum(a, b)

    def backward(self, grad):
        return grad * self.first, grad * ~self.first


class Minimum(Function):
    """Elementwise minimum; on ties the gradient goes to the first input."""

    def forward(self, a, b):
        self.first = a <= b
        return self.xp.minimum(a, b)

    def backward(self, grad):
        return grad * self.first, grad * ~self.first


class Clip(Function):
    """Clamp into [low, high] (either may be None); the gradient passes inside."""

    def __init__(self, low, high):
        if low is None and high is None:
            raise ValueError('clip needs a lower or an upper bound')
        self.low, self.high = low, high

    def forward(self, x):
        xp = self.xp
        low = -xp.inf if self.low is None else self.low
        high = xp.inf if self.high is None else self.high
        self.inside = (x >= low) & (x <= high)
        return xp.clip(x, low, high)

    def backward(self, grad):
        return grad * self.inside


class Where(Function):
    """``condition ? a : b``; ``condition`` is a boolean input without gradient."""

    def forward(self, condition, a, b):
        self.condition = condition.astype(bool, copy=False)
        return self.xp.where(self.condition, a, b)

    def backward(self, grad):
        zero = grad.dtype.type(0)
        return None, self.xp.where(self.condition, grad, zero), \
            self.xp.where(self.condition, zero, grad)


class MatMul(Function):
    """Matrix product with numpy's ``@`` semantics (batched, broadcast, 1-D)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a @ b

    def backward(self, grad):
        a, b, xp = self.a, self.b, self.xp
        if a.ndim == b.ndim == 1:  # inner product: grad is a scalar
            return grad * b, grad * a
        # Treat vectors as matrices so one formula covers every case.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        if a.ndim == 1:
            grad = xp.expand_dims(grad, -2)
        if b.ndim == 1:
            grad = xp.expand_dims(grad, -1)
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = grad @ xp.swapaxes(b2, -1, -2)
            grad_a = grad_a.reshape(grad_a.shape[:-2] + (a.shape[-1],)) if a.ndim == 1 else grad_a
        if self.needs_input_grad[1]:
            grad_b = xp.swapaxes(a2, -1, -2) @ grad
            grad_b = grad_b.reshape(grad_b.shape[:-2] + (b.shape[0],)) if b.ndim == 1 else grad_b
        return grad_a, grad_b


def add(a, b):
    """Elementwise ``a + b``."""
    return Add()(a, b)


def sub(a, b):
    """Elementwise ``a - b``."""
    return Sub()(a, b)


def mul(a, b):
    """Elementwise ``a * b``."""
    return Mul()(a, b)


def div(a, b):
    """Elementwise ``a / b``."""
    return Div()(a, b)


def pow(a, b):
    """Elementwise ``a ** b``."""
    return Pow()(a, b)


def neg(x):
    """Elementwise ``-x``."""
    return Neg()(x)


def exp(x):
    """Elementwise exponential."""
    return Exp()(x)


def log(x):
    """Elementwise natural logarithm."""
    return Log()(x)


def sqrt(x):
    """Elementwise square root."""
    return Sqrt()(x)


def abs(x):
    """Elementwise absolute value (gradient 0 at 0)."""
    return Abs()(x)


def maximum(a, b):
    """Elementwise maximum of ``a`` and ``b``."""
    return Maximum()(a, b)


def minimum(a, b):
    """Elementwise minimum of ``a`` and ``b``."""
    return Minimum()(a, b)


def clip(x, low, high):
    """Clamp ``x`` into ``[low, high]``."""
    return Clip(low, high)(x)


def where(condition, a, b):
    """Elements of ``a`` where ``condition`` holds, else of ``b``."""
    return Where()(condition, a, b)


def matmul(a, b):
    """Matrix product ``a @ b``, batched over leading axes."""
    return MatMul()(a, b)
