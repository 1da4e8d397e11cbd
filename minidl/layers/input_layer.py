"""Input and InputLayer: where a graph of layers starts.

An input is usually a placeholder, fed with data. ``Input(tensor=...)``
wraps an existing tensor instead, as Keras 2 allows: a symbolic tensor (the
input's value is then computed from that tensor's graph whenever it is not
fed) or a Tensor (a constant input, such as a ``K.variable``).
"""

import numpy as np

from minidl import config
from minidl.naming import unique_name
from minidl.layers.base import Layer
from minidl.layers.symbolic import Node, SymbolicTensor
from minidl.tensor import Tensor


class InputLayer(Layer):
    """The layer behind :func:`Input`: it holds the graph's entry tensor.

    Args:
        input_shape: Shape of one sample.
        batch_size: Optional fixed batch size.
        dtype: dtype of the data fed here ('float32'; 'int32'/'int64' for
            token indices).
        batch_input_shape: Full shape including the batch size.
        name: Layer name ('input_1', 'input_2', ... by default).
        input_tensor: A tensor to wrap instead of making a placeholder (see
            :func:`Input`).

    Attributes:
        is_placeholder: False when the layer wraps a tensor.
        constant: The Tensor it wraps, or None.
    """

    def __init__(self, input_shape=None, batch_size=None, dtype=None, batch_input_shape=None,
                 name=None, sparse=False, ragged=False, input_tensor=None):
        if sparse or ragged:
            raise NotImplementedError('sparse and ragged inputs are not supported')
        if input_tensor is not None and not isinstance(input_tensor, (SymbolicTensor, Tensor)):
            raise TypeError(f'Input(tensor=...) takes a symbolic tensor or a Tensor, got '
                            f'{type(input_tensor).__name__}')
        if batch_input_shape is None:
            if input_shape is not None:
                batch_input_shape = (batch_size,) + tuple(input_shape)
            elif input_tensor is not None:
                batch_input_shape = tuple(input_tensor.shape)
            else:
                raise ValueError('Input needs a shape (or batch_shape)')
        if input_tensor is not None:
            _check_wrapped_shape(input_tensor, batch_input_shape)
            dtype = dtype or input_tensor.dtype
        super().__init__(name=name or unique_name('input', zero_based=False),
                         dtype=dtype or config.default_dtype,
                         batch_input_shape=batch_input_shape)
        self.built = True
        self.is_placeholder = input_tensor is None
        self.constant = input_tensor if isinstance(input_tensor, Tensor) else None
        # A wrapped symbolic tensor is the node's input, so that the graph (and
        # get_source_inputs) reaches through this layer to where it comes from.
        wrapped = [input_tensor] if isinstance(input_tensor, SymbolicTensor) else []
        tensor = SymbolicTensor(self.batch_input_shape, self.dtype, name=self.name)
        tensor.node = Node(self, wrapped, {}, tensor)
        self._inbound_nodes.append(tensor.node)

    def get_config(self):
        return {'batch_input_shape': list(self.batch_input_shape), 'dtype': self.dtype,
                'sparse': False, 'ragged': False, 'name': self.name}

    def compute_output_shape(self, input_shape):
        return self.batch_input_shape


def _check_wrapped_shape(tensor, batch_shape):
    given = tuple(tensor.shape)
    if len(given) != len(batch_shape) or any(
            a is not None and b is not None and a != b for a, b in zip(given, batch_shape)):
        raise ValueError(f'Input(tensor=...): the tensor has shape {given}, which does not fit '
                         f'the shape asked for, {tuple(batch_shape)}')


def Input(shape=None, batch_size=None, name=None, dtype=None, batch_shape=None, sparse=False,
          ragged=False, tensor=None):
    """A symbolic tensor to start a functional model from.

    Args:
        shape: Shape of one sample, e.g. ``(28, 28, 1)``; None entries are
            sizes that vary (e.g. the time steps of a sequence).
        batch_size: Optional fixed batch size.
        name: Name of the input layer.
        dtype: dtype of the data ('float32' by default).
        batch_shape: Full shape including the batch size (instead of shape).
        tensor: A tensor to wrap instead of a placeholder, as in Keras 2: a
            symbolic tensor (say ``K.concatenate`` of variables and a
            placeholder), whose value the input then takes whenever it is
            not fed, or a Tensor (a constant input). Its shape is the
            input's unless ``shape`` or ``batch_shape`` is given.

    Returns:
        SymbolicTensor: pass it to layers, and to ``Model(inputs=...)``.
    """
    if shape is not None and np.isscalar(shape):
        shape = (shape,)
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype,
                       batch_input_shape=batch_shape, name=name, sparse=sparse, ragged=ragged,
                       input_tensor=tensor)
    return layer.output
