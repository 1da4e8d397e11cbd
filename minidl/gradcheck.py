"""Numerical gradient checking: central finite differences in float64.

Use it to test a custom :class:`~minidl.Function`::

    from minidl.gradcheck import gradcheck
    gradcheck(lambda x, w: my_op(x, w), [x_array, w_array])

The analytic gradient of a random projection ``sum(w_k * output_k)`` of the
outputs is compared with ``(f(x + eps) - f(x - eps)) / (2 eps)`` for every
element of every floating input.
"""

import numpy as np

from minidl.compute import arrays
from minidl.tensor import Tensor, no_grad


class GradcheckError(AssertionError):
    """Raised when analytic and numerical gradients disagree."""


def gradcheck(function, inputs, eps=1e-6, atol=1e-6, rtol=1e-4, seed=0):
    """Check ``function``'s gradients against central finite differences.

    Args:
        function: Callable taking tensors and returning a tensor or a tuple of
            tensors (integer outputs are ignored).
        inputs: Arrays or tensors. Floating ones are converted to float64 and
            checked; others (labels, indices) are passed through unchanged.
        eps: Finite-difference step.
        atol: Absolute tolerance.
        rtol: Relative tolerance, against the larger gradient magnitude.
        seed: Seed of the random output projection.

    Returns:
        True when every gradient matches.

    Raises:
        GradcheckError: naming the input and element of the worst mismatch.
    """
    tensors = [_as_float64(x) for x in inputs]
    checked = [i for i, t in enumerate(tensors) if t.requires_grad]
    if not checked:
        raise ValueError('gradcheck needs at least one floating input')
    rng = np.random.default_rng(seed)
    outputs = _floating(function(*tensors))
    xp = tensors[checked[0]].xp
    weights = [xp.asarray(rng.standard_normal(out.shape)) for out in outputs]

    for out, weight in zip(outputs, weights):
        if out.requires_grad:
            out.backward(weight, retain_graph=True)

    def objective():
        with no_grad():
            return sum(float((out.data * w).sum())
                       for out, w in zip(_floating(function(*tensors)), weights))

    for i in checked:
        tensor = tensors[i]
        analytic = arrays.to_numpy(tensor.grad.data) if tensor.grad is not None \
            else np.zeros(tensor.shape)
        numeric = np.zeros(tensor.shape)
        flat = tensor.data.reshape(-1)  # a view: editing it perturbs the input
        assert flat.base is tensor.data or flat.base is tensor.data.base
        for j in range(flat.size):
            original = float(flat[j])
            flat[j] = original + eps
            plus = objective()
            flat[j] = original - eps
            minus = objective()
            flat[j] = original
            numeric.reshape(-1)[j] = (plus - minus) / (2 * eps)
        error = np.abs(analytic - numeric)
        bound = atol + rtol * np.maximum(np.abs(analytic), np.abs(numeric))
        if (error > bound).any():
            worst = np.unravel_index(np.argmax(error - bound), error.shape)
            raise GradcheckError(
                f'gradient of input {i} (shape {tensor.shape}) differs at '
                f'{tuple(map(int, worst))}: '
                f'analytic {analytic[worst]:.8g}, numerical {numeric[worst]:.8g}; '
                f'{int((error > bound).sum())} of {error.size} elements out of tolerance')
    return True


def _as_float64(value):
    data = value.data if isinstance(value, Tensor) else value
    if not arrays.is_array(data):
        data = np.asarray(data)
    if data.dtype.kind != 'f':
        return Tensor.wrap(data)
    # A private C-ordered float64 copy: the check perturbs it element by element
    # through a flat view, which must share its memory.
    xp = arrays.get_array_module(data)
    return Tensor.wrap(xp.array(data, dtype=np.float64, order='C', copy=True)).requires_grad_()


def _floating(outputs):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return [out for out in outputs if out.dtype.kind == 'f']
