"""Normalization layers (Keras 2): BatchNormalization and LayerNormalization."""

import numbers

import numpy as np

from minidl import constraints, initializers, regularizers
from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.conv import serialize_or_none
from minidl.layers.input_spec import InputSpec


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_epsilon(layer_name, epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise ValueError(f'{layer_name}: epsilon must be a positive number, got {epsilon!r}')
    return float(epsilon)


def _resolve_axes(layer, axes, input_shape):
    """``axes`` as sorted non-negative axes of ``input_shape``, never the batch axis."""
    rank = len(input_shape)
    resolved = []
    for axis in axes:
        if not -rank <= axis < rank or axis % rank == 0:
            raise ValueError(f'layer {layer.name!r}: axis {axis} is not a feature axis of '
                             f'inputs of shape {tuple(input_shape)}')
        resolved.append(axis % rank)
    if len(set(resolved)) != len(resolved):
        raise ValueError(f'layer {layer.name!r}: axis {axes} names an axis twice')
    unknown = [axis for axis in resolved if input_shape[axis] is None]
    if unknown:
        raise ValueError(f'layer {layer.name!r}: axis {unknown[0]} of the input must have a '
                         f'known size; got input shape {tuple(input_shape)}')
    return sorted(resolved)


class _Normalization(Layer):
    """Arguments shared by the normalization layers: scale gamma and offset beta."""

    supports_masking = True
    keeps_float32 = True  # under 'mixed_float16': statistics in float32, as in tf.keras

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                 beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint,
                 **kwargs):
        name = type(self).__name__
        axes = [axis] if _is_int(axis) else axis
        if not isinstance(axes, (list, tuple)) or not axes or not all(map(_is_int, axes)):
            raise ValueError(f'{name}: axis must be an int or a list of ints, got {axis!r}')
        epsilon = _check_epsilon(name, epsilon)
        beta_initializer = initializers.get(beta_initializer)
        gamma_initializer = initializers.get(gamma_initializer)
        beta_regularizer = regularizers.get(beta_regularizer)
        gamma_regularizer = regularizers.get(gamma_regularizer)
        beta_constraint = constraints.get(beta_constraint)
        gamma_constraint = constraints.get(gamma_constraint)
        super().__init__(**kwargs)
        self.axis = int(axis) if _is_int(axis) else [int(a) for a in axes]
        self.epsilon, self.center, self.scale = epsilon, bool(center), bool(scale)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint

    def _axes(self):
        return [self.axis] if isinstance(self.axis, int) else list(self.axis)

    def _add_scale_and_offset(self, shape):
        """Create gamma then beta (as Keras orders them), each only if asked for."""
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight('gamma', shape, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight('beta', shape, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            'axis': self.axis,
            'epsilon': self.epsilon,
            'center': self.center,
            'scale': self.scale,
            'beta_initializer': initializers.serialize(self.beta_initializer),
            'gamma_initializer': initializers.serialize(self.gamma_initializer),
            'beta_regularizer': serialize_or_none(regularizers, self.beta_regularizer),
            'gamma_regularizer': serialize_or_none(regularizers, self.gamma_regularizer),
            'beta_constraint': serialize_or_none(constraints, self.beta_constraint),
            'gamma_constraint': serialize_or_none(constraints, self.gamma_constraint),
        })
        return config


class BatchNormalization(_Normalization):
    """Normalizes each channel with the batch's statistics while training.

    With ``training=True`` the layer normalises with the mean and variance of
    the batch (over every axis but ``axis``) and updates its moving
    statistics: ``moving = moving * momentum + batch * (1 - momentum)``, the
    moving variance receiving the unbiased batch variance (as TensorFlow's
    fused kernel and PyTorch do). Otherwise (``training`` None or False, as
    in ``predict``) it normalises with the moving statistics.

    As in tf.keras 2, a layer with ``trainable = False`` always runs in
    inference mode, even with ``training=True``, and its moving statistics
    stay fixed: freezing a BatchNormalization layer for fine-tuning freezes
    its normalisation too.

    Weights, in Keras's order: gamma, beta (trainable, each only with
    ``scale`` / ``center``), then moving_mean and moving_variance.

    Args:
        axis: The channel axis (-1 for channels_last, 1 for channels_first);
            a list of one axis is accepted too.
        momentum: Weight of the old moving statistics in each update.
        epsilon: Added to the variance before the square root.
        center: Whether to add the offset beta.
        scale: Whether to multiply by gamma.
        beta_initializer, gamma_initializer, moving_mean_initializer,
        moving_variance_initializer: Initializers of the four weights.
        beta_regularizer, gamma_regularizer: Penalties on beta and gamma.
        beta_constraint, gamma_constraint: Projections applied after updates.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones',
                 moving_mean_initializer='zeros', moving_variance_initializer='ones',
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        if isinstance(axis, (list, tuple)) and len(axis) != 1:
            raise NotImplementedError(f'BatchNormalization: normalising over several channel '
                                      f'axes is not supported; got axis={axis!r}')
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) \
                or not 0 <= momentum <= 1:
            raise ValueError(f'BatchNormalization: momentum must be a number in [0, 1], '
                             f'got {momentum!r}')
        moving_mean_initializer = initializers.get(moving_mean_initializer)
        moving_variance_initializer = initializers.get(moving_variance_initializer)
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint,
                         **kwargs)
        self.momentum = float(momentum)
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer

    def build(self, input_shape):
        axis = _resolve_axes(self, self._axes(), input_shape)[0]
        channels = input_shape[axis]
        self._add_scale_and_offset((channels,))
        self.moving_mean = self.add_weight('moving_mean', (channels,),
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight('moving_variance', (channels,),
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        self._channel_axis = axis
        self.input_spec = InputSpec(ndim=len(input_shape), axes={axis: channels})
        self.built = True

    def call(self, inputs, training=None):
        # A frozen layer normalises as in inference and keeps its statistics (tf.keras 2).
        training = bool(training) and self.trainable
        return F.batch_norm(inputs, self.gamma, self.beta, self.moving_mean,
                            self.moving_variance, training, momentum=self.momentum,
                            epsilon=self.epsilon, axis=self._channel_axis)

    def get_config(self):
        config = super().get_config()
        config.update({
            'momentum': self.momentum,
            'moving_mean_initializer': initializers.serialize(self.moving_mean_initializer),
            'moving_variance_initializer':
                initializers.serialize(self.moving_variance_initializer),
        })
        return config


class LayerNormalization(_Normalization):
    """Normalizes each sample over ``axis`` (its own mean and variance), then scales.

    The statistics are those of one sample, so training and inference
    compute the same thing and nothing is kept between batches.

    Args:
        axis: Axis or list of axes to normalise over (the batch axis excluded).
            gamma and beta have the shape of those axes.
        epsilon: Added to the variance before the square root.
        center: Whether to add the offset beta.
        scale: Whether to multiply by gamma.
        beta_initializer, gamma_initializer: Initializers of beta and gamma.
        beta_regularizer, gamma_regularizer: Penalties on beta and gamma.
        beta_constraint, gamma_constraint: Projections applied after updates.
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint,
                         **kwargs)

    def build(self, input_shape):
        axes = _resolve_axes(self, self._axes(), input_shape)
        self._add_scale_and_offset(tuple(input_shape[axis] for axis in axes))
        self._normalized_axes = tuple(axes)
        self.input_spec = InputSpec(ndim=len(input_shape),
                                    axes={axis: input_shape[axis] for axis in axes})
        self.built = True

    def call(self, inputs):
        return F.layer_norm(inputs, self.gamma, self.beta, axis=self._normalized_axes,
                            epsilon=self.epsilon)
