"""Activation functions, with Keras 2's definitions and default arguments.

Each function that needs its own backward is one Function; where the output
determines the derivative (relu, sigmoid, tanh, softmax, ...) backward reuses
the saved output instead of the input. Activations accept floating arrays only.

numpy ufuncs return scalars, not arrays, for 0-d inputs, and a scalar cannot
be an ``out=`` argument: a fresh result that is later updated with ``out=`` is
allocated with ``empty_like`` first.
"""

import math

import numpy as np

from minidl.compute import get_array_module
from minidl.compute.donation import may_overwrite
from minidl.compute.relu import maximum_with_zero, positive_part_grad
from minidl.functions.axes import normalize_axis
from minidl.tensor import Function

# Keras 2's SELU constants (Klambauer et al., 2017).
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_CUBIC = 0.044715


class _Activation(Function):
    """A Function of one floating array; subclasses define ``activate`` as its forward."""

    def forward(self, x):
        # Integer input would be promoted to float64 by some ufuncs and rejected by others.
        if x.dtype.kind != 'f':
            raise TypeError(f'{type(self).__name__} needs a floating input, got {x.dtype}')
        return self.activate(x)


class ReLU(_Activation):
    """max(x, 0). Forward and backward run in the calling thread, one pass each: handing
    halves of them to minidl's pool cost more than it saved (ResNet-20, W3 of the
    benchmarks, 19 ReLUs of 0.25 to 4 MB, a step on the 2-core AMD EPYC under load: the
    forward 13.3 against 5.5 ms in inference, 15.0 against 5.7 in training, the backward
    20.2 against 9.1; a 4 MB forward pass alone 0.31 against 0.25 ms): the passes are
    bound by memory."""

    def activate(self, x):
        xp = self.xp
        if x.ndim == 0:
            self.y = xp.maximum(x, 0)
            return self.y
        # A model's inference may donate x (minidl.compute.donation): max(x, 0) then
        # replaces it where it lies, still in the cache, with the same values.
        in_place = may_overwrite(x) and not any(self.needs_input_grad)
        y = self.y = x if in_place else xp.empty_like(x)
        maximum_with_zero(x, y, xp)
        return y

    def backward(self, grad):
        xp, y = self.xp, self.y
        if y.ndim == 0:
            return grad * (y > 0)
        if grad.dtype == y.dtype and grad.shape == y.shape:  # the usual case: the shared mask
            return positive_part_grad(grad, y, xp)
        grad_x = xp.empty(y.shape, xp.result_type(grad, y))
        xp.multiply(grad, y > 0, out=grad_x)
        return grad_x


class LeakyReLU(_Activation):
    def __init__(self, alpha):
        self.alpha = alpha

    def activate(self, x):
        xp = self.xp
        self.x = x
        # max(x, 0) + alpha * min(x, 0): an exact select, much faster than where().
        y = xp.minimum(x, 0)
        y *= self.alpha
        y += xp.maximum(x, 0)
        return y

    def backward(self, grad):
        return _select(self.x > 0, grad, grad * self.alpha)


class ELU(_Activation):
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))``; SELU is a scaled ELU."""

    def __init__(self, alpha, scale=1.0):
        self.alpha, self.scale = alpha, scale

    def activate(self, x):
        xp = self.xp
        # expm1 of min(x, 0) is 0 where x > 0, so the two branches simply add.
        y = xp.expm1(xp.minimum(x, 0))
        y *= self.alpha
        y += xp.maximum(x, 0)
        if self.scale != 1.0:
            y *= self.scale
        self.x, self.y = x, y
        return y

    def backward(self, grad):
        # For x <= 0, d/dx scale * alpha * (exp(x) - 1) = y + scale * alpha.
        return _select(self.x > 0, grad * self.scale, grad * (self.y + self.scale * self.alpha))


class Sigmoid(_Activation):
    def activate(self, x):
        self.y = _sigmoid(x)
        return self.y

    def backward(self, grad):
        slope = 1 - self.y
        slope *= self.y
        slope *= grad
        return slope


class HardSigmoid(_Activation):
    """Keras 2's ``clip(0.2 * x + 0.5, 0, 1)``."""

    def activate(self, x):
        xp = self.xp
        y = xp.multiply(x, 0.2, out=xp.empty_like(x))
        y += 0.5
        if self.needs_input_grad[0]:
            self.inside = (y >= 0) & (y <= 1)
        return xp.clip(y, 0, 1, out=y)

    def backward(self, grad):
        return grad * self.inside * 0.2


class Tanh(_Activation):
    def activate(self, x):
        self.y = self.xp.tanh(x)
        return self.y

    def backward(self, grad):
        xp = self.xp
        slope = xp.multiply(self.y, self.y, out=xp.empty_like(self.y))
        xp.subtract(1, slope, out=slope)
        slope *= grad
        return slope


class Softmax(_Activation):
    def __init__(self, axis):
        self.axis = axis

    def activate(self, x):
        xp = self.xp
        self.axis = _softmax_axis('softmax', x, self.axis)
        # Subtracting the maximum keeps exp from overflowing; softmax is shift-invariant.
        y = x - x.max(axis=self.axis, keepdims=True)
        xp.exp(y, out=y)
        y /= y.sum(axis=self.axis, keepdims=True)
        self.y = y
        return y

    def backward(self, grad):
        # The Jacobian-vector product y * (grad - sum(grad * y)).
        result = grad - (grad * self.y).sum(axis=self.axis, keepdims=True)
        result *= self.y
        return result


class LogSoftmax(_Activation):
    def __init__(self, axis):
        self.axis = axis

    def activate(self, x):
        self.axis = _softmax_axis('log_softmax', x, self.axis)
        y, log_total, _ = _log_softmax_parts(self.xp, x, self.axis)
        y -= log_total
        self.y = y
        return y

    def backward(self, grad):
        xp = self.xp
        correction = xp.exp(self.y)
        correction *= grad.sum(axis=self.axis, keepdims=True)
        return xp.subtract(grad, correction, out=correction)


class Softplus(_Activation):
    def activate(self, x):
        xp = self.xp
        self.x = x
        # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), which never overflows.
        y = xp.abs(x, out=xp.empty_like(x))
        xp.negative(y, out=y)
        xp.exp(y, out=y)
        xp.log1p(y, out=y)
        y += xp.maximum(x, 0)
        return y

    def backward(self, grad):
        return grad * _sigmoid(self.x)


class Softsign(_Activation):
    def activate(self, x):
        denominator = self.xp.abs(x)
        denominator += 1
        self.denominator = denominator
        return x / denominator

    def backward(self, grad):
        grad = grad / self.denominator
        grad /= self.denominator
        return grad


class GELU(_Activation):
    """``x * Phi(x)``, Phi the standard normal CDF, or its tanh approximation."""

    def __init__(self, approximate):
        self.approximate = approximate

    def activate(self, x):
        xp = self.xp
        self.x = x
        if self.approximate:
            # 1 + tanh(u) = 2 sigmoid(2u), which does not cancel where tanh(u) is near -1.
            inner = x * x
            inner *= _GELU_CUBIC
            inner += 1
            inner *= x
            inner *= 2 * _SQRT_2_OVER_PI
            self.s = _sigmoid(inner)
            return x * self.s
        # Phi(x) = erfc(-x / sqrt(2)) / 2, and erfc(-z) = 2 - erfc(z).
        half_tail = _erfc(xp.abs(x) * math.sqrt(0.5))
        half_tail *= 0.5
        self.cdf = _select(x >= 0, 1 - half_tail, half_tail)
        return x * self.cdf

    def backward(self, grad):
        xp, x = self.xp, self.x
        if self.approximate:
            # d/dx x s(2u) = s + 2 x s (1 - s) u', with u' = sqrt(2/pi) (1 + 3 c x^2).
            slope = 1 - self.s
            slope *= self.s
            slope *= x
            inner = x * x
            inner *= 3 * _GELU_CUBIC
            inner += 1
            slope *= inner
            slope *= 2 * _SQRT_2_OVER_PI
            slope += self.s
            slope *= grad
            return slope
        # d/dx x Phi(x) = Phi(x) + x phi(x), phi the standard normal density.
        slope = xp.multiply(x, x, out=xp.empty_like(x))
        slope *= -0.5
        xp.exp(slope, out=slope)
        slope *= x
        slope *= 1 / math.sqrt(2 * math.pi)
        slope += self.cdf
        slope *= grad
        return slope


def _select(condition, a, b):
    """``where(condition, a, b)`` for finite ``a`` and ``b``, overwriting ``b``.

    numpy's ``where`` branches per element and is several times slower on
    unpredictable conditions than these two multiplications and one addition,
    which are exact since each element gets one term plus an exact zero.
    """
    result = a * condition
    b *= ~condition
    result += b
    return result


def _sigmoid(x):
    """``1 / (1 + exp(-x))``; accurate for every x, as exp overflowing to inf gives 0."""
    xp = get_array_module(x)
    y = xp.negative(x, out=xp.empty_like(x))
    with np.errstate(over='ignore'):
        xp.exp(y, out=y)
    y += 1
    return xp.reciprocal(y, out=y)


def _softmax_axis(name, x, axis):
    """``axis`` of ``x`` as an index in ``[0, x.ndim)``; a 0-d ``x`` has no axis to normalize."""
    if x.ndim == 0:
        raise ValueError(f'{name} normalizes along an axis and needs at least 1-D input, '
                         f'got a 0-d array')
    return normalize_axis(axis, x.shape, name)


def _log_softmax_parts(xp, x, axis, with_softmax=False):
    """``x - max(x)`` along ``axis``, its log-sum-exp (kept as an axis), and the softmax.

    The log-softmax is the first minus the second; returning them apart lets
    sparse cross-entropy, which needs one element per row, skip forming it.
    The softmax (None unless ``with_softmax``) costs one division. All three
    are new arrays.
    """
    # Subtracting the maximum keeps exp from overflowing; (log-)softmax is shift-invariant.
    shifted = x - x.max(axis=axis, keepdims=True)
    exps = xp.exp(shifted)
    total = exps.sum(axis=axis, keepdims=True)
    log_total = xp.log(total)
    if not with_softmax:
        return shifted, log_total, None
    exps /= total
    return shifted, log_total, exps


# W. J. Cody, "Rational Chebyshev approximations for the error function",
# Math. Comp. 23 (1969), with the coefficients of his CALERF routine, written
# here highest power first. Relative error about 1e-14 in float64 and 1e-6 in
# float32 (the rounding of y * y in exp(-y * y) dominates).
_ERF_SMALL_NUMERATOR = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
                        3.77485237685302021e02, 3.20937758913846947e03)
_ERF_SMALL_DENOMINATOR = (1.0, 2.36012909523441209e01, 2.44024637934444173e02,
                          1.28261652607737228e03, 2.84423683343917062e03)
_ERFC_MID_NUMERATOR = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
                       6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
                       1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERFC_MID_DENOMINATOR = (1.0, 1.57449261107098347e01, 1.17693950891312499e02,
                         5.37181101862009858e02, 1.62138957456669019e03, 3.29079923573345963e03,
                         4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_LARGE_NUMERATOR = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
                         1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFC_LARGE_DENOMINATOR = (1.0, 2.56852019228982242e00, 1.87295284992346725e00,
                           5.27905102951428412e-1, 6.05183413124413191e-2, 2.33520497626869185e-3)


def _polynomial(coefficients, z):
    """The polynomial with ``coefficients`` (highest power first) at ``z``, by Horner's rule."""
    value = z * coefficients[0]
    value += coefficients[1]
    for c in coefficients[2:]:
        value *= z
        value += c
    return value


def _rational(numerator, denominator, z):
    value = _polynomial(numerator, z)
    value /= _polynomial(denominator, z)
    return value


def _erfc(y):
    """The complementary error function of ``y >= 0``, in the dtype of ``y``.

    Accurate relative to erfc itself, also where it is tiny and ``1 - erf`` is
    not. Cody's ranges are evaluated on every element and the right one is
    selected: no boolean indexing, which would synchronise a GPU.
    """
    xp = get_array_module(y)
    shape = y.shape
    # erfc(30) underflows even in float64; clamping keeps every range finite. At least 1-D,
    # so that the results below are arrays (see the module docstring).
    y = xp.atleast_1d(xp.minimum(y, 30.0))
    square = y * y
    small = _rational(_ERF_SMALL_NUMERATOR, _ERF_SMALL_DENOMINATOR, square)
    small *= y
    xp.subtract(1, small, out=small)
    # Above 0.46875, erfc(y) = exp(-y^2) R(y), R Cody's mid-range rational up to 4.
    scaled = _rational(_ERFC_MID_NUMERATOR, _ERFC_MID_DENOMINATOR, y)
    # Beyond 4, R(y) = (1/sqrt(pi) - S(1/y^2) / y^2) / y, evaluated on y clamped to at least
    # 4. Only float64 needs it: up to 10, where erfc underflows in float32, the mid-range
    # rational stays within a relative 4e-10 of R.
    if y.dtype.itemsize > 4:
        far = xp.maximum(y, 4.0)
        inverse_square = far * far
        xp.reciprocal(inverse_square, out=inverse_square)
        tail = _rational(_ERFC_LARGE_NUMERATOR, _ERFC_LARGE_DENOMINATOR, inverse_square)
        tail *= inverse_square
        xp.subtract(1 / math.sqrt(math.pi), tail, out=tail)
        tail /= far
        scaled = _select(y > 4.0, tail, scaled)
    xp.negative(square, out=square)
    scaled *= xp.exp(square, out=square)
    return _select(y <= 0.46875, small, scaled).reshape(shape)


def relu(x):
    """Rectified linear unit, ``max(x, 0)``."""
    return ReLU()(x)


def leaky_relu(x, alpha=0.3):
    """``x`` for positive ``x``, else ``alpha * x`` (Keras's LeakyReLU default 0.3)."""
    return LeakyReLU(alpha)(x)


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""
    return ELU(alpha)(x)


def selu(x):
    """Scaled ELU with Keras's constants (alpha 1.6732..., scale 1.0507...)."""
    return ELU(_SELU_ALPHA, _SELU_SCALE)(x)


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``."""
    return Sigmoid()(x)


def hard_sigmoid(x):
    """Keras 2's piecewise-linear sigmoid, ``clip(0.2 * x + 0.5, 0, 1)``."""
    return HardSigmoid()(x)


def tanh(x):
    """Hyperbolic tangent."""
    return Tanh()(x)


def softmax(x, axis=-1):
    """Softmax along ``axis``: ``exp(x) / sum(exp(x))``, computed stably.

    Args:
        x: Floating tensor of at least one dimension.
        axis: The axis to normalize along.

    Returns:
        A tensor of the shape of ``x``.

    Raises:
        ValueError: If ``x`` is 0-d (it has no axis) or ``axis`` is out of range.
    """
    return Softmax(axis)(x)


def log_softmax(x, axis=-1):
    """Logarithm of the softmax along ``axis``, computed without forming the softmax.

    Raises ValueError, as ``softmax`` does, for a 0-d ``x`` or an out-of-range ``axis``.
    """
    return LogSoftmax(axis)(x)


def softplus(x):
    """``log(1 + exp(x))``, stable for large ``|x|``."""
    return Softplus()(x)


def softsign(x):
    """``x / (1 + |x|)``."""
    return Softsign()(x)


def gelu(x, approximate=False):
    """Gaussian error linear unit.

    Args:
        x: Input tensor.
        approximate: Use ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``
            instead of the exact ``x * Phi(x)``.

    Returns:
        A tensor of the shape of ``x``.
    """
    return GELU(bool(approximate))(x)
