"""cuDNN descriptors as Python objects that destroy their descriptor when collected."""

import ctypes

import numpy as np

from minidl.compute.cuda.cudnn import api, constants
from minidl.compute.cuda.cudnn.handle import compute_type, data_type, math_type


class Descriptor:
    """One cuDNN descriptor of ``kind`` ('Tensor', 'Filter', 'Convolution', ...).

    ``value`` is the ``cudnn<kind>Descriptor_t`` to pass to cuDNN calls.
    """

    def __init__(self, kind):
        self._functions, self._kind = api.functions(), kind
        self.value = ctypes.c_void_p()
        getattr(self._functions, f'Create{kind}Descriptor')(ctypes.byref(self.value))

    def __del__(self):
        if self.value:
            getattr(self._functions, f'Destroy{self._kind}Descriptor')(self.value)


def _int_array(values):
    return (ctypes.c_int * len(values))(*values)


def tensor_4d(n, c, h, w, dtype, tensor_format):
    """A 4-D tensor descriptor given by NCHW sizes, in NCHW or NHWC memory layout."""
    descriptor = Descriptor('Tensor')
    api.functions().SetTensor4dDescriptor(
        descriptor.value, tensor_format, data_type(dtype), n, c, h, w)
    return descriptor


def tensor_nd(shape, dtype):
    """A C-contiguous N-D tensor descriptor (cuDNN needs at least 3 dimensions)."""
    shape = tuple(shape) + (1,) * (3 - len(shape))
    strides = np.cumprod((1,) + shape[:0:-1])[::-1]
    descriptor = Descriptor('Tensor')
    api.functions().SetTensorNdDescriptor(
        descriptor.value, data_type(dtype), len(shape), _int_array(shape),
        _int_array([int(s) for s in strides]))
    return descriptor


def filter_4d(k, c, h, w, dtype, tensor_format):
    """A filter descriptor: (out, in, kh, kw) sizes, stored KCRS (NCHW) or KRSC (NHWC)."""
    descriptor = Descriptor('Filter')
    api.functions().SetFilter4dDescriptor(
        descriptor.value, data_type(dtype), tensor_format, k, c, h, w)
    return descriptor


def convolution(pads, strides, dilations, dtype):
    """A 2-D cross-correlation with symmetric ``pads`` (rows, cols), math type per config."""
    descriptor = Descriptor('Convolution')
    functions = api.functions()
    functions.SetConvolution2dDescriptor(
        descriptor.value, *pads, *strides, *dilations, constants.CROSS_CORRELATION,
        compute_type(dtype))
    functions.SetConvolutionMathType(descriptor.value, math_type(dtype))
    return descriptor


def pooling(mode, window, pads, strides):
    """A 2-D pooling descriptor; NaNs propagate, as in numpy's maximum."""
    descriptor = Descriptor('Pooling')
    api.functions().SetPooling2dDescriptor(
        descriptor.value, mode, constants.PROPAGATE_NAN, *window, *pads, *strides)
    return descriptor


def no_dropout(handle):
    """A dropout descriptor with rate 0 (the RNN descriptor needs one; no states)."""
    descriptor = Descriptor('Dropout')
    api.functions().SetDropoutDescriptor(descriptor.value, handle, 0.0, None, 0, 0)
    return descriptor


def rnn_data(dtype, steps, batch, vector_size):
    """A batch-major ``(batch, steps, vector_size)`` sequence of full-length samples."""
    descriptor = Descriptor('RNNData')
    lengths = _int_array([steps] * batch)
    api.functions().SetRNNDataDescriptor(
        descriptor.value, data_type(dtype), constants.RNN_DATA_BATCH_MAJOR_UNPACKED, steps,
        batch, vector_size, lengths, None)
    return descriptor


def rnn(cell_mode, bias_mode, input_size, hidden_size, dtype, dropout):
    """A one-layer, one-direction RNN of ``cell_mode`` (v8 API), no projection.

    Padded I/O is enabled: cuDNN takes the unpacked (batch-major) sequence
    layout of :func:`rnn_data` only with it.
    """
    descriptor = Descriptor('RNN')
    api.functions().SetRNNDescriptor_v8(
        descriptor.value, constants.RNN_ALGO_STANDARD, cell_mode, bias_mode,
        constants.UNIDIRECTIONAL, constants.LINEAR_INPUT, data_type(dtype),
        compute_type(dtype), math_type(dtype), input_size, hidden_size, hidden_size, 1,
        dropout.value, constants.RNN_PADDED_IO_ENABLED)
    return descriptor


def tensor_size(descriptor):
    """Number of elements of an (up to 8-D) tensor descriptor filled in by cuDNN."""
    dims, strides = (ctypes.c_int * 8)(), (ctypes.c_int * 8)()
    dtype, count = ctypes.c_int(), ctypes.c_int()
    api.functions().GetTensorNdDescriptor(descriptor.value, 8, ctypes.byref(dtype),
                                          ctypes.byref(count), dims, strides)
    return int(np.prod(dims[:count.value]))
