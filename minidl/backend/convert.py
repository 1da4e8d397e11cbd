"""Arguments of backend functions as Tensors, arrays, axes and shapes."""

import numpy as np

import minidl.functions as F
from minidl.compute import is_array
from minidl.layers.symbolic import SymbolicTensor
from minidl.tensor import Tensor


def as_tensor(value, dtype=None):
    """``value`` as a Tensor (floating data in ``floatx()`` unless ``dtype`` says otherwise)."""
    if isinstance(value, Tensor):
        return value if dtype is None or value.dtype == np.dtype(dtype) else F.cast(value, dtype)
    if isinstance(value, SymbolicTensor):
        raise TypeError(f'{value!r} has no value here; pass Tensors or arrays')
    return Tensor(value, dtype=dtype)


def data_of(value):
    """The array inside a Tensor, or ``value`` itself (arrays, numbers)."""
    return value.data if isinstance(value, Tensor) else value


def wrap(result):
    """The array (or numpy scalar) of a computation without gradient, as a Tensor."""
    return Tensor.wrap(result if is_array(result) else np.asarray(result))


def as_axis(axis):
    """Keras's axis arguments (None, an int, a list or tuple) as numpy takes them."""
    return tuple(int(a) for a in axis) if isinstance(axis, (list, tuple)) else axis


def as_shape(shape):
    """A shape given as ints, 0-d Tensors (``K.shape(x)[0]``) or an int Tensor, as a tuple."""
    if isinstance(shape, Tensor):
        return tuple(int(size) for size in shape.numpy().reshape(-1))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(data_of(size)) for size in shape)
