"""Keras recurrent weights in and out of cuDNN's RNN weight space.

cuDNN keeps all weights of an RNN in one buffer whose layout it chooses;
``cudnnGetRNNWeightParams`` gives the address of each gate's input matrix
(``linLayerID`` 0..G-1), recurrent matrix (G..2G-1) and their biases. Each
matrix is ``(units, in)``, row-major: the transpose of one gate block of a
Keras kernel ``(in, G * units)``.

Gate order: cuDNN's LSTM gates are i, f, g, o, as Keras's i, f, c, o; its GRU
gates are r, z, h where Keras has z, r, h. A Keras LSTM bias is one vector
(cuDNN's single input bias); a Keras GRU bias with ``reset_after`` has an
input row and a recurrent row (cuDNN's double bias, with the same formula).
"""

import ctypes

from minidl.compute.arrays import get_array_module
from minidl.compute.cuda.cudnn import api, descriptors

# cuDNN gate j holds Keras gate block GATE_ORDER[cell][j].
GATE_ORDER = {'lstm': (0, 1, 2, 3), 'gru': (1, 0, 2)}


class WeightLayout:
    """Where each matrix and bias of a one-layer RNN lies in its weight space.

    Attributes:
        size: Weight space size in elements.
        matrices: Element offset of the matrix of each linLayerID.
        biases: Element offset of the bias of each linLayerID, or None where
            the bias mode has no such bias.
    """

    def __init__(self, xp, cudnn_handle, rnn_descriptor, size_bytes, dtype, gates):
        self.size = size_bytes // dtype.itemsize
        probe = xp.empty(self.size, dtype)
        matrix, bias = descriptors.Descriptor('Tensor'), descriptors.Descriptor('Tensor')
        self.matrices, self.biases, self.matrix_sizes = [], [], []
        for layer_id in range(2 * gates):
            matrix_address, bias_address = ctypes.c_void_p(), ctypes.c_void_p()
            api.functions().GetRNNWeightParams(
                cudnn_handle, rnn_descriptor.value, 0, size_bytes, probe.data.ptr, layer_id,
                matrix.value, ctypes.byref(matrix_address), bias.value,
                ctypes.byref(bias_address))
            self.matrices.append((matrix_address.value - probe.data.ptr) // dtype.itemsize)
            self.matrix_sizes.append(descriptors.tensor_size(matrix))
            self.biases.append(None if not bias_address.value else
                               (bias_address.value - probe.data.ptr) // dtype.itemsize)

    def matrix(self, space, layer_id, columns):
        """The ``(units, columns)`` matrix of ``layer_id`` as a view of ``space``."""
        start, size = self.matrices[layer_id], self.matrix_sizes[layer_id]
        return space[start:start + size].reshape(-1, columns)

    def bias(self, space, layer_id, units):
        """The bias of ``layer_id`` as a view of ``space``."""
        start = self.biases[layer_id]
        return space[start:start + units]


def pack(layout, cell, kernel, recurrent_kernel, bias):
    """A new weight space holding Keras weights (``bias`` may be None)."""
    xp = get_array_module(kernel)
    units, gates = recurrent_kernel.shape[0], len(GATE_ORDER[cell])
    # Zeros: cuDNN may leave gaps between blocks, and zero biases stand in for absent ones.
    space = xp.zeros(layout.size, kernel.dtype)
    for j, block in enumerate(GATE_ORDER[cell]):
        columns = slice(block * units, (block + 1) * units)
        layout.matrix(space, j, kernel.shape[0])[...] = kernel[:, columns].T
        layout.matrix(space, gates + j, units)[...] = recurrent_kernel[:, columns].T
        if bias is not None:
            rows = bias if bias.ndim == 2 else bias[None]
            for offset, row in zip((0, gates), rows):
                layout.bias(space, offset + j, units)[...] = row[columns]
    return space


def unpack(layout, cell, space, features, units, bias_shape):
    """Keras-shaped ``(kernel, recurrent_kernel, bias)`` gradients from a gradient space
    (``bias_shape`` None for no bias)."""
    xp, gates = get_array_module(space), len(GATE_ORDER[cell])
    kernel = xp.empty((features, gates * units), space.dtype)
    recurrent = xp.empty((units, gates * units), space.dtype)
    bias = None if bias_shape is None else xp.empty(bias_shape, space.dtype)
    for j, block in enumerate(GATE_ORDER[cell]):
        columns = slice(block * units, (block + 1) * units)
        kernel[:, columns] = layout.matrix(space, j, features).T
        recurrent[:, columns] = layout.matrix(space, gates + j, units).T
        if bias is not None:
            rows = bias if bias.ndim == 2 else bias[None]
            for offset, row in zip((0, gates), rows):
                row[columns] = layout.bias(space, offset + j, units)
    return kernel, recurrent, bias
