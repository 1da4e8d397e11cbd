"""Activations, dropout, normalization by the L2 norm, top-k membership and bias addition."""

import minidl.functions as F
from minidl.backend.config import normalize_data_format
from minidl.backend.convert import as_axis, as_tensor, wrap
from minidl.compute import Generator, default_generator
from minidl.layers.operation import recordable


@recordable
def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Rectified linear unit, with Keras's optional slope, ceiling and threshold.

    ``max_value`` for ``x >= max_value``, ``x`` for ``threshold <= x <
    max_value``, ``alpha * (x - threshold)`` below the threshold.
    """
    x = as_tensor(x)
    if max_value is None and threshold == 0:
        return F.relu(x) if alpha == 0 else F.leaky_relu(x, alpha)
    positive = F.where(wrap(x.data > threshold), x, 0.0) if threshold != 0 else F.relu(x)
    if max_value is not None:
        positive = F.clip(positive, 0.0, max_value)
    if alpha != 0:
        positive = positive - alpha * F.relu(threshold - x)
    return positive


@recordable
def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` if ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return F.elu(as_tensor(x), alpha)


@recordable
def softmax(x, axis=-1):
    """Softmax along ``axis``."""
    return F.softmax(as_tensor(x), axis)


@recordable
def softplus(x):
    """``log(1 + exp(x))``."""
    return F.softplus(as_tensor(x))


@recordable
def softsign(x):
    """``x / (1 + |x|)``."""
    return F.softsign(as_tensor(x))


@recordable
def sigmoid(x):
    """Logistic sigmoid."""
    return F.sigmoid(as_tensor(x))


@recordable
def hard_sigmoid(x):
    """``clip(0.2 * x + 0.5, 0, 1)``."""
    return F.hard_sigmoid(as_tensor(x))


@recordable
def tanh(x):
    """Hyperbolic tangent."""
    return F.tanh(as_tensor(x))


@recordable
def dropout(x, level, noise_shape=None, seed=None):
    """Zero each element with probability ``level`` and scale the others by ``1 / (1 - level)``.

    Args:
        x: Input tensor.
        level: Fraction dropped, in [0, 1).
        noise_shape: Shape of the mask, broadcast against ``x``.
        seed: Seed of the mask's generator (the same mask for the same
            seed); by default the mask comes from the default generator.
    """
    generator = default_generator() if seed is None else Generator(seed)
    return F.dropout(as_tensor(x), level, generator, training=True, noise_shape=noise_shape)


@recordable
def l2_normalize(x, axis=None):
    """``x / sqrt(max(sum(x ** 2, axis), 1e-12))``: unit L2 norm along ``axis`` (None: all)."""
    x = as_tensor(x)
    squares = F.sum(x * x, axis=as_axis(axis), keepdims=True)
    return x / F.sqrt(F.maximum(squares, 1e-12))


@recordable
def in_top_k(predictions, targets, k):
    """Whether each sample's target class is among its ``k`` highest predictions.

    Args:
        predictions: (batch, classes) scores.
        targets: (batch,) integer classes.
        k: How many of the highest scores count.

    Returns:
        A (batch,) boolean Tensor. Classes tied with the target's score all
        count as within the top k, as in TensorFlow.
    """
    predictions = as_tensor(predictions)
    xp = predictions.xp
    targets = xp.asarray(as_tensor(targets).data).reshape(-1).astype('int64')
    scores = predictions.data[xp.arange(len(targets)), targets]
    return wrap((predictions.data > scores[:, None]).sum(axis=1) < k)


@recordable
def bias_add(x, bias, data_format=None):
    """``x + bias``, the bias along the channel axis of ``data_format``.

    Args:
        x: Tensor (batch, ..., channels), or (batch, channels, ...) for
            'channels_first'.
        bias: (channels,), or one bias per position and channel, of the
            shape of a channels-last sample.
        data_format: 'channels_last' or 'channels_first' (default:
            ``image_data_format()``).
    """
    x, bias = as_tensor(x), as_tensor(bias)
    if bias.ndim not in (1, x.ndim - 1):
        raise ValueError(f'bias_add: a bias of shape {bias.shape} for an input of shape '
                         f'{x.shape}; expected 1 or {x.ndim - 1} dimensions')
    if normalize_data_format(data_format) == 'channels_first' and x.ndim > 2:
        if bias.ndim == 1:
            bias = F.reshape(bias, (bias.shape[0],) + (1,) * (x.ndim - 2))
        else:
            bias = F.transpose(bias, (bias.ndim - 1,) + tuple(range(bias.ndim - 1)))
    return x + bias
