"""Activation functions by Keras 2's names: ``Dense(10, activation='softmax')``.

Each function takes a tensor (or anything ``Tensor()`` accepts) and returns
a tensor, differentiably. ``softmax`` over the last axis and ``sigmoid``
record their input on the output, ``output._keras_logits = (x, kind)``, so
that the cross-entropy losses compute from the logits with the fused,
numerically stable formula, as Keras does with its TensorFlow backend.

``get(identifier)`` resolves None (linear), a name or a callable;
``serialize(function)`` gives the name back.
"""

from minidl import functions as F
from minidl.registry import Registry
from minidl.tensor import Tensor


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def linear(x):
    """The identity."""
    return x


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Rectified linear unit, with Keras's leak, cap and threshold.

    ``x`` where ``threshold < x``, capped at ``max_value``;
    ``alpha * (x - threshold)`` elsewhere.

    Args:
        x: Input tensor.
        alpha: Slope below the threshold.
        max_value: Upper bound of the output, or None for none.
        threshold: Values at or below it are zeroed (or leak with ``alpha``).
    """
    if max_value is None and threshold == 0:
        return F.leaky_relu(x, alpha) if alpha else F.relu(x)
    x = _tensor(x)
    positive = F.relu(x) if threshold == 0 else F.where(x > threshold, x, 0.0)
    if max_value is not None:
        # As Keras, the cap also clips at 0 (it matters only for a negative threshold).
        positive = F.clip(positive, 0.0, max_value)
    if alpha:
        positive = positive - alpha * F.relu(threshold - x)
    return positive


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return relu(x, max_value=6.0)


def leaky_relu(x, alpha=0.2):
    """``x`` for positive ``x``, else ``alpha * x`` (tf.nn.leaky_relu's default 0.2)."""
    return F.leaky_relu(x, alpha)


def elu(x, alpha=1.0):
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``."""
    return F.elu(x, alpha)


def selu(x):
    """Scaled ELU with the constants of Klambauer et al. (2017)."""
    return F.selu(x)


def gelu(x, approximate=False):
    """Gaussian error linear unit, exact or (``approximate=True``) with tanh."""
    return F.gelu(x, approximate)


def sigmoid(x):
    """``1 / (1 + exp(-x))``; the output records ``x`` as its logits."""
    x = _tensor(x)
    output = F.sigmoid(x)
    output._keras_logits = (x, 'sigmoid')
    return output


def hard_sigmoid(x):
    """Keras 2's piecewise-linear sigmoid, ``clip(0.2 * x + 0.5, 0, 1)``."""
    return F.hard_sigmoid(x)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int or a tuple of ints).

    Over the last axis, the output records ``x`` as its logits.

    Raises:
        ValueError: If ``x`` has fewer than 2 dimensions, as in Keras.
    """
    x = _tensor(x)
    if x.ndim <= 1:
        raise ValueError(f'softmax needs a tensor of at least 2 dimensions (a batch of '
                         f'vectors); got shape {x.shape}')
    if isinstance(axis, int):
        output = F.softmax(x, axis=axis)
    else:
        axis = tuple(axis)
        # Subtracting the maximum avoids overflow; softmax does not change under it.
        exponentials = F.exp(x - F.max(x, axis=axis, keepdims=True).detach())
        output = exponentials / F.sum(exponentials, axis=axis, keepdims=True)
    if axis in (-1, x.ndim - 1):
        output._keras_logits = (x, 'softmax')
    return output


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``."""
    return F.log_softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``."""
    return F.softplus(x)


def softsign(x):
    """``x / (1 + |x|)``."""
    return F.softsign(x)


def tanh(x):
    """Hyperbolic tangent."""
    return F.tanh(x)


def exponential(x):
    """``exp(x)``."""
    return F.exp(x)


def swish(x):
    """``x * sigmoid(x)`` (also named silu)."""
    x = _tensor(x)
    return x * F.sigmoid(x)


def mish(x):
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    x = _tensor(x)
    return x * F.tanh(F.softplus(x))


silu = swish

REGISTRY = Registry('activation', none=linear)
for _function in (linear, relu, relu6, leaky_relu, elu, selu, gelu, sigmoid, hard_sigmoid,
                  softmax, log_softmax, softplus, softsign, tanh, exponential, swish, mish):
    REGISTRY.register(_function)
REGISTRY.register(swish, 'silu')


def get(identifier):
    """The activation function for None (linear), a name or a callable.

    Raises:
        ValueError: For an unknown name.
        TypeError: For anything else that is not callable.
    """
    return REGISTRY.get(identifier)


def serialize(activation):
    """The name of an activation function (an object with ``get_config``: its dict)."""
    return REGISTRY.serialize(activation)


def deserialize(name, custom_objects=None):
    """The activation function called ``name`` (looked up in ``custom_objects`` first).

    Raises:
        ValueError: If ``name`` is not a known activation.
    """
    return REGISTRY.deserialize(name, custom_objects)
