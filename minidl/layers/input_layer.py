"""Input and InputLayer: where a graph of layers starts."""

import numpy as np

from minidl import config
from minidl.compute import unique_name
from minidl.layers.base import Layer
from minidl.layers.symbolic import Node, SymbolicTensor


class InputLayer(Layer):
    """The layer behind :func:`Input`: it holds the graph's entry tensor.

    Args:
        input_shape: Shape of one sample.
        batch_size: Optional fixed batch size.
        dtype: dtype of the data fed here ('float32'; 'int32'/'int64' for
            token indices).
        batch_input_shape: Full shape including the batch size.
        name: Layer name ('input_1', 'input_2', ... by default).
    """

    def __init__(self, input_shape=None, batch_size=None, dtype=None, batch_input_shape=None,
                 name=None, sparse=False, ragged=False):
        if sparse or ragged:
            raise NotImplementedError('sparse and ragged inputs are not supported')
        if batch_input_shape is None:
            if input_shape is None:
                raise ValueError('Input needs a shape (or batch_shape)')
            batch_input_shape = (batch_size,) + tuple(input_shape)
        super().__init__(name=name or unique_name('input', zero_based=False),
                         dtype=dtype or config.default_dtype,
                         batch_input_shape=batch_input_shape)
        self.built = True
        tensor = SymbolicTensor(self.batch_input_shape, self.dtype, name=self.name)
        tensor.node = Node(self, [], {}, tensor)
        self._inbound_nodes.append(tensor.node)

    def get_config(self):
        return {'batch_input_shape': list(self.batch_input_shape), 'dtype': self.dtype,
                'sparse': False, 'ragged': False, 'name': self.name}

    def compute_output_shape(self, input_shape):
        return self.batch_input_shape


def Input(shape=None, batch_size=None, name=None, dtype=None, batch_shape=None, sparse=False,
          ragged=False):
    """A symbolic tensor to start a functional model from.

    Args:
        shape: Shape of one sample, e.g. ``(28, 28, 1)``; None entries are
            sizes that vary (e.g. the time steps of a sequence).
        batch_size: Optional fixed batch size.
        name: Name of the input layer.
        dtype: dtype of the data ('float32' by default).
        batch_shape: Full shape including the batch size (instead of shape).

    Returns:
        SymbolicTensor: pass it to layers, and to ``Model(inputs=...)``.
    """
    if shape is not None and np.isscalar(shape):
        shape = (shape,)
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype,
                       batch_input_shape=batch_shape, name=name, sparse=sparse, ragged=ragged)
    return layer.output
