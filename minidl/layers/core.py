"""Core layers (Keras 2): Dense, Activation, Dropout, Flatten, Reshape,
Permute, RepeatVector and Lambda.
"""

import inspect
import numbers

import numpy as np

from minidl import activations, constraints, initializers, regularizers
from minidl import functions as F
from minidl.compute import new_generator
from minidl.layers.base import Layer
from minidl.layers.conv import normalize_data_format
from minidl.layers.input_spec import InputSpec


class Dense(Layer):
    """Fully connected layer: ``activation(inputs @ kernel + bias)``.

    Inputs of rank above 2 are transformed along their last axis, as Keras
    does: (batch, steps, in) gives (batch, steps, units).

    Args:
        units: Output size.
        activation: Activation (name or callable); None for linear.
        use_bias: Whether to add a bias vector.
        kernel_initializer, bias_initializer: Initializers of the kernel
            ``(in, units)`` and the bias ``(units,)``.
        kernel_regularizer, bias_regularizer, activity_regularizer: Penalties.
        kernel_constraint, bias_constraint: Projections applied after updates.
    """

    supports_masking = True

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer='glorot_uniform', bias_initializer='zeros',
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        if isinstance(units, bool) or not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f'Dense: units must be a positive int, got {units!r}')
        activation = activations.get(activation)
        kernel_initializer = initializers.get(kernel_initializer)
        bias_initializer = initializers.get(bias_initializer)
        kernel_regularizer = regularizers.get(kernel_regularizer)
        bias_regularizer = regularizers.get(bias_regularizer)
        kernel_constraint = constraints.get(kernel_constraint)
        bias_constraint = constraints.get(bias_constraint)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units, self.activation, self.use_bias = int(units), activation, bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        if len(input_shape) < 2 or input_shape[-1] is None:
            raise ValueError(f'layer {self.name!r} needs inputs of rank >= 2 with a known last '
                             f'axis; got input shape {tuple(input_shape)}')
        features = input_shape[-1]
        self.kernel = self.add_weight('kernel', (features, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight('bias', (self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: features})
        self.built = True

    def call(self, inputs):
        # ReLU, the common case, runs in place inside the dense Function.
        fused = 'relu' if self.activation is activations.relu else None
        if inputs.ndim == 2:
            outputs = F.dense(inputs, self.kernel, self.bias, fused)
        else:
            # One 2-D GEMM over all leading axes, rather than a batched product.
            rows = F.reshape(inputs, (-1, inputs.shape[-1]))
            outputs = F.reshape(F.dense(rows, self.kernel, self.bias, fused),
                                inputs.shape[:-1] + (self.units,))
        return outputs if fused else self.activation(outputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update({
            'units': self.units,
            'activation': activations.serialize(self.activation),
            'use_bias': self.use_bias,
            'kernel_initializer': initializers.serialize(self.kernel_initializer),
            'bias_initializer': initializers.serialize(self.bias_initializer),
            'kernel_regularizer': regularizers.serialize(self.kernel_regularizer),
            'bias_regularizer': regularizers.serialize(self.bias_regularizer),
            'activity_regularizer': regularizers.serialize(self.activity_regularizer),
            'kernel_constraint': constraints.serialize(self.kernel_constraint),
            'bias_constraint': constraints.serialize(self.bias_constraint),
        })
        return config


class Activation(Layer):
    """Applies an activation function to its input.

    Args:
        activation: Name ('relu', 'softmax', ...) or callable.
    """

    supports_masking = True

    def __init__(self, activation, **kwargs):
        activation = activations.get(activation)
        super().__init__(**kwargs)
        self.activation = activation

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config['activation'] = activations.serialize(self.activation)
        return config


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of its inputs while training, scaling the rest up.

    Only active when called with ``training=True`` (as ``fit`` does); otherwise
    the input passes unchanged.

    Args:
        rate: Fraction to drop, in [0, 1).
        noise_shape: Shape of the mask, broadcast against the input (None
            entries take the input's size): (batch, 1, features) drops the
            same features at every step.
        seed: Seed of this layer's own random generator; without it the
            generator is seeded from the default one when the layer is made
            (``minidl.set_seed`` decides it).
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate < 1:
            raise ValueError(f'Dropout: rate must be a number in [0, 1), got {rate!r}')
        super().__init__(**kwargs)
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self.generator = new_generator(seed)

    def call(self, inputs, training=None):
        return F.dropout(inputs, self.rate, self.generator, training=bool(training),
                         noise_shape=self.noise_shape)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({'rate': self.rate,
                       'noise_shape': None if self.noise_shape is None else list(self.noise_shape),
                       'seed': self.seed})
        return config


class Flatten(Layer):
    """Flattens each sample to a vector: (batch, ...) -> (batch, product of the rest).

    Args:
        data_format: 'channels_first' inputs are first transposed to channels
            last, so that the order of the features (and a following Dense
            kernel) is the same for both formats, as in Keras.
    """

    def __init__(self, data_format=None, **kwargs):
        data_format = normalize_data_format(data_format)
        super().__init__(**kwargs)
        self.data_format = data_format
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        if self.data_format == 'channels_first' and inputs.ndim > 2:
            inputs = F.transpose(inputs, (0,) + tuple(range(2, inputs.ndim)) + (1,))
        return F.reshape(inputs, (inputs.shape[0], -1))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if None in rest else int(np.prod(rest, dtype=np.int64))
        return (input_shape[0], size)

    def get_config(self):
        config = super().get_config()
        config['data_format'] = self.data_format
        return config


class Reshape(Layer):
    """Reshapes each sample to ``target_shape`` (the batch axis is kept).

    Args:
        target_shape: Shape of one sample; one entry may be -1, inferred
            from the size of the input.
    """

    def __init__(self, target_shape, **kwargs):
        try:
            shape = tuple(target_shape)
        except TypeError:
            shape = None
        if shape is None or not all(
                isinstance(s, (int, np.integer)) and (s > 0 or s == -1) for s in shape) \
                or shape.count(-1) > 1:
            raise ValueError(f'Reshape: target_shape must be a tuple of positive ints with at '
                             f'most one -1, got {target_shape!r}')
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in shape)

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        if None in rest:
            return (input_shape[0],) + tuple(None if s == -1 else s for s in self.target_shape)
        size = int(np.prod(rest, dtype=np.int64))
        known = int(np.prod([s for s in self.target_shape if s != -1], dtype=np.int64))
        if (-1 in self.target_shape and size % known) or \
                (-1 not in self.target_shape and size != known):
            raise ValueError(f'layer {self.name!r}: cannot reshape input of shape '
                             f'{tuple(input_shape)} ({size} values per sample) to target_shape '
                             f'{self.target_shape}')
        return (input_shape[0],) + tuple(size // known if s == -1 else s
                                         for s in self.target_shape)

    def call(self, inputs):
        output_shape = self.compute_output_shape(inputs.shape)
        return F.reshape(inputs, (inputs.shape[0],) + output_shape[1:])

    def get_config(self):
        config = super().get_config()
        config['target_shape'] = self.target_shape
        return config


class Permute(Layer):
    """Permutes the axes of each sample; ``dims`` counts from 1 (the batch axis stays).

    Args:
        dims: A permutation of 1..rank, e.g. (2, 1) swaps the two axes of
            (batch, steps, features).
    """

    def __init__(self, dims, **kwargs):
        dims = tuple(dims)
        if not all(isinstance(d, (int, np.integer)) for d in dims) \
                or sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(f'Permute: dims must be a permutation of 1..{len(dims)} '
                             f'(the batch axis 0 stays in place), got {dims!r}')
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        self.input_spec = InputSpec(ndim=len(dims) + 1)

    def call(self, inputs):
        return F.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        config = super().get_config()
        config['dims'] = self.dims
        return config


class RepeatVector(Layer):
    """Repeats each sample's vector ``n`` times: (batch, features) -> (batch, n, features).

    Args:
        n: Number of repetitions.
    """

    def __init__(self, n, **kwargs):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
            raise ValueError(f'RepeatVector: n must be a positive int, got {n!r}')
        super().__init__(**kwargs)
        self.n = int(n)
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        batch, features = inputs.shape
        return F.broadcast_to(F.expand_dims(inputs, 1), (batch, self.n, features))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        config = super().get_config()
        config['n'] = self.n
        return config


class Lambda(Layer):
    """Wraps a Python function of tensors as a layer, for models kept in memory.

    A Lambda layer holds code, which minidl never serializes (saved files
    never run code when loaded), so a model with one cannot be saved with
    its architecture; save its weights, or write a Layer subclass with a
    ``get_config``.

    Args:
        function: Called as ``function(inputs, **arguments)``; it also gets
            ``training`` when it has such a parameter.
        output_shape: Shape of one output sample (a tuple, the batch axis
            excluded), or a callable mapping the full input shape to the full
            output shape. By default it is found by running ``function``.
        mask: The output's mask: None (a mask reaching the layer stops here,
            as in Keras 2), a callable ``mask(inputs, input_mask)``, or a
            fixed mask.
        arguments: Keyword arguments passed to ``function``.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        if not callable(function):
            raise TypeError(f'Lambda: function must be callable, got {function!r}')
        if output_shape is not None and not callable(output_shape):
            output_shape = tuple(output_shape)
        super().__init__(**kwargs)
        self.function, self.arguments = function, dict(arguments or {})
        self._output_shape = output_shape
        self.mask = mask

    def compute_mask(self, inputs, mask=None):
        return self.mask(inputs, mask) if callable(self.mask) else self.mask

    def call(self, inputs, training=None):
        arguments = dict(self.arguments)
        try:
            parameters = inspect.signature(self.function).parameters
        except (TypeError, ValueError):
            parameters = {}
        if 'training' in parameters:
            arguments['training'] = training
        return self.function(inputs, **arguments)

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        batch = input_shape[0][0] if isinstance(input_shape, list) else input_shape[0]
        return (batch,) + self._output_shape

    def get_config(self):
        raise TypeError(f'layer {self.name!r} is a Lambda layer: it holds Python code, which '
                        f'minidl does not serialize (loading a model never runs code). Save '
                        f'the weights only, or replace the Lambda by a Layer subclass with '
                        f'get_config')
