"""Activation layers with arguments or weights (Keras 2): LeakyReLU, PReLU, ELU,
ThresholdedReLU, Softmax and ReLU.

Each passes an input mask on unchanged (an activation acts on every element
alone, so padded steps stay padded).
"""

import numbers

from minidl import constraints, initializers, regularizers
from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.conv import serialize_or_none
from minidl.layers.input_spec import InputSpec


def _number(layer_name, argument, value, minimum=None):
    """``value`` as a float, checked to be a real number (and at least ``minimum``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f'{layer_name}: {argument} must be a number, got {value!r}')
    if minimum is not None and value < minimum:
        raise ValueError(f'{layer_name}: {argument} must be >= {minimum}, got {value!r}')
    return float(value)


class _ElementwiseActivation(Layer):
    """An activation layer: the output has the input's shape."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class LeakyReLU(_ElementwiseActivation):
    """``x`` for ``x > 0``, else ``alpha * x``.

    Args:
        alpha: Slope for negative inputs (Keras's default 0.3).
    """

    def __init__(self, alpha=0.3, **kwargs):
        alpha = _number('LeakyReLU', 'alpha', alpha)
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        return F.leaky_relu(inputs, self.alpha)

    def get_config(self):
        config = super().get_config()
        config['alpha'] = self.alpha
        return config


class PReLU(_ElementwiseActivation):
    """Leaky ReLU whose negative slopes are learned: ``max(x, 0) - alpha * max(-x, 0)``.

    Args:
        alpha_initializer: Initializer of the slopes ('zeros': starts as ReLU).
        alpha_regularizer: Penalty on the slopes.
        alpha_constraint: Projection of the slopes after each update.
        shared_axes: Axes (counted from 1, the batch axis being 0) along which
            one slope is shared; (1, 2) on (batch, rows, cols, channels)
            learns one slope per channel.

    Its weight ``alpha`` has the input's shape without the batch axis, with
    size 1 on the shared axes.
    """

    def __init__(self, alpha_initializer='zeros', alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        alpha_initializer = initializers.get(alpha_initializer)
        alpha_regularizer = regularizers.get(alpha_regularizer)
        alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is not None:
            shared_axes = [shared_axes] if isinstance(shared_axes, numbers.Integral) \
                else list(shared_axes)
            if not all(isinstance(a, numbers.Integral) and not isinstance(a, bool) and a >= 1
                       for a in shared_axes):
                raise ValueError(f'PReLU: shared_axes must be axes counted from 1 (the batch '
                                 f'axis 0 is always shared), got {shared_axes!r}')
            shared_axes = [int(a) for a in shared_axes]
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        self.alpha_regularizer = alpha_regularizer
        self.alpha_constraint = alpha_constraint
        self.shared_axes = shared_axes

    def build(self, input_shape):
        rank = len(input_shape)
        shared = set(self.shared_axes or ())
        if any(axis >= rank for axis in shared):
            raise ValueError(f'layer {self.name!r}: shared_axes {self.shared_axes} do not fit '
                             f'inputs of shape {tuple(input_shape)}')
        alpha_shape = [1 if axis in shared else input_shape[axis] for axis in range(1, rank)]
        if None in alpha_shape:
            raise ValueError(f'layer {self.name!r} needs a known size on every axis it does not '
                             f'share; got input shape {tuple(input_shape)} with shared_axes '
                             f'{self.shared_axes}')
        self.alpha = self.add_weight('alpha', alpha_shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        self.input_spec = InputSpec(ndim=rank, axes={
            axis: input_shape[axis] for axis in range(1, rank) if axis not in shared})
        self.built = True

    def call(self, inputs):
        return F.relu(inputs) - self.alpha * F.relu(-inputs)

    def get_config(self):
        config = super().get_config()
        config.update({
            'alpha_initializer': initializers.serialize(self.alpha_initializer),
            'alpha_regularizer': serialize_or_none(regularizers, self.alpha_regularizer),
            'alpha_constraint': serialize_or_none(constraints, self.alpha_constraint),
            'shared_axes': self.shared_axes,
        })
        return config


class ELU(_ElementwiseActivation):
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha: Scale of the negative part.
    """

    def __init__(self, alpha=1.0, **kwargs):
        alpha = _number('ELU', 'alpha', alpha)
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        return F.elu(inputs, self.alpha)

    def get_config(self):
        config = super().get_config()
        config['alpha'] = self.alpha
        return config


class ThresholdedReLU(_ElementwiseActivation):
    """``x`` for ``x > theta``, else 0.

    Args:
        theta: The threshold.
    """

    def __init__(self, theta=1.0, **kwargs):
        theta = _number('ThresholdedReLU', 'theta', theta)
        super().__init__(**kwargs)
        self.theta = theta

    def call(self, inputs):
        return F.where(inputs.data > self.theta, inputs, 0.0)

    def get_config(self):
        config = super().get_config()
        config['theta'] = self.theta
        return config


class Softmax(_ElementwiseActivation):
    """Softmax along one axis.

    Args:
        axis: The axis that sums to 1 (the last by default).
    """

    def __init__(self, axis=-1, **kwargs):
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise ValueError(f'Softmax: axis must be an int, got {axis!r}')
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return F.softmax(inputs, self.axis)

    def get_config(self):
        config = super().get_config()
        config['axis'] = self.axis
        return config


class ReLU(_ElementwiseActivation):
    """Rectified linear unit with Keras 2.2.4's options.

    With the defaults it is ``max(x, 0)``. Otherwise it is ``x`` where
    ``x > threshold`` (capped at ``max_value``) and
    ``negative_slope * (x - threshold)`` below the threshold.

    Args:
        max_value: Largest output (None: no cap); >= 0.
        negative_slope: Slope below the threshold; >= 0.
        threshold: Where the linear part starts.
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        if max_value is not None:
            max_value = _number('ReLU', 'max_value', max_value, minimum=0)
        negative_slope = _number('ReLU', 'negative_slope', negative_slope, minimum=0)
        threshold = _number('ReLU', 'threshold', threshold)
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        if self.threshold == 0:
            outputs = F.relu(inputs)
        else:
            outputs = F.where(inputs.data > self.threshold, inputs, 0.0)
        if self.max_value is not None:
            # Keras clips to [0, max_value]: a negative threshold's kept values become 0.
            outputs = F.clip(outputs, 0.0, self.max_value)
        if self.negative_slope:
            outputs = outputs - self.negative_slope * F.relu(self.threshold - inputs)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update({'max_value': self.max_value, 'negative_slope': self.negative_slope,
                       'threshold': self.threshold})
        return config
