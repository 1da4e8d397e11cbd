"""Variables, constants and placeholders; shapes, dtypes and values; update operations.

A Keras variable is a Tensor that owns its data (a copy of the value given)
and, when floating, requires gradients. A placeholder is a symbolic input,
as made by ``Input``: it is fed by :func:`minidl.backend.function`.

``update``, ``update_add``, ``update_sub`` and ``moving_average_update``
return Keras 2's update operations (:class:`minidl.layers.updates.Update`),
which change the variable only when they run: in a training step (returned
by an optimizer's ``get_updates``, or added to a layer with ``add_update``),
in ``K.function(..., updates=[...])``, or when ``K.eval`` runs one, as
TensorFlow 1's session did.
"""

import numpy as np

import minidl.functions as F
from minidl.backend.config import floatx
from minidl.backend.convert import as_tensor, data_of
from minidl.compute import to_numpy
from minidl.naming import unique_name
from minidl.layers.input_layer import Input, InputLayer
from minidl.layers.operation import recordable
from minidl.layers.symbolic import SymbolicTensor
from minidl.layers.updates import Update, run_updates
from minidl.optimizers.keras_updates import made_once
from minidl.optimizers.optimizer import BoundNumber
from minidl.tensor import Tensor, no_grad


def variable(value, dtype=None, name=None, constraint=None):
    """A Tensor holding a copy of ``value``; floating ones require gradients.

    Args:
        value: Array, Tensor or nested numbers.
        dtype: Its dtype (``floatx()`` by default, whatever the value's type).
        name: Its name ('variable', 'variable_1', ... by default).
        constraint: A projection applied after optimizer updates.

    Inside an optimizer's ``get_updates``, which minidl calls at every
    training step, the variables made on the first step are returned again
    (see :mod:`minidl.optimizers.keras_updates`).
    """
    array = np.array(_host_value(value), dtype=dtype or floatx())

    def make():
        tensor = Tensor(array, dtype=array.dtype)
        if array.dtype.kind == 'f':
            tensor.requires_grad_()
        tensor.name = name or unique_name('variable')
        tensor.constraint = constraint
        return tensor

    return made_once(make, array.shape, array.dtype)


def constant(value, dtype=None, shape=None, name=None):
    """A Tensor of ``value`` (a scalar filled into ``shape`` when given), without gradient."""
    array = np.asarray(_host_value(value), dtype=dtype or floatx())
    if shape is not None:
        array = np.broadcast_to(array, tuple(shape)).copy()
    tensor = Tensor(array, dtype=array.dtype)
    tensor.name = name
    return tensor


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A symbolic input of ``shape`` (batch size included; None for unknown sizes).

    Args:
        shape: Full shape, e.g. ``(None, 4, 5)``.
        ndim: Number of dimensions, all of unknown size, when ``shape`` is not given.
        dtype: Its dtype (``floatx()`` by default).
        sparse: Must be False (minidl has no sparse tensors).
        name: Name of its input layer.
    """
    if sparse:
        raise NotImplementedError('placeholder: minidl has no sparse tensors')
    if shape is None:
        if ndim is None:
            raise ValueError('placeholder needs a shape or a number of dimensions (ndim)')
        shape = (None,) * ndim
    return Input(batch_shape=tuple(shape), dtype=dtype or floatx(), name=name)


def is_tensor(x):
    """Whether ``x`` is a Tensor or a symbolic tensor."""
    return isinstance(x, (Tensor, SymbolicTensor))


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic tensor of a layer graph (from ``Input`` or a layer call).

    Raises:
        ValueError: If ``x`` is no tensor at all (an array, a number).
    """
    if not is_tensor(x):
        raise ValueError(f'is_keras_tensor expects a tensor, got {type(x).__name__}')
    return isinstance(x, SymbolicTensor)


def is_placeholder(x):
    """Whether ``x`` is a symbolic input (from ``placeholder`` or ``Input``)."""
    return isinstance(x, SymbolicTensor) and isinstance(x.node.layer, InputLayer)


def is_sparse(x):
    """Always False: minidl has no sparse tensors."""
    return False


def to_dense(x):
    """``x`` itself: minidl's tensors are all dense."""
    return x


def int_shape(x):
    """The shape as a tuple of ints (None for the unknown sizes of a symbolic tensor)."""
    return tuple(x.shape) if hasattr(x, 'shape') else np.shape(x)


get_variable_shape = int_shape


def ndim(x):
    """The number of dimensions."""
    return len(int_shape(x))


def dtype(x):
    """The dtype's name, e.g. 'float32'."""
    return np.dtype(x.dtype).name


def count_params(x):
    """The number of elements of ``x`` (a variable or Tensor)."""
    return int(np.prod(int_shape(x)))


def shape(x):
    """The shape of ``x`` as a 1-D int32 Tensor (``K.shape(x)[0]`` is the batch size)."""
    return Tensor(np.asarray(int_shape(x), dtype=np.int32))


# Its stand-in value, while a graph's shapes are found, comes from x's stand-in alone.
shape.depends_on_shapes_only = True
shape = recordable(shape)


def eval(x):
    """The value of a Tensor (or array) as a new numpy array.

    Given an update operation (``K.update(...)``), it runs it and returns the
    variable's new value, as evaluating an assign operation did in Keras 2.

    Raises:
        TypeError: For a symbolic tensor, whose value depends on the data fed
            to its inputs (use :func:`minidl.backend.function`).
    """
    if isinstance(x, SymbolicTensor):
        raise TypeError(f'{x!r} has no value of its own; compute it with K.function(inputs, '
                        f'[x]) or with a model')
    if isinstance(x, Update):
        run_updates([x])
        x = x.variable
    return np.array(_host_value(x))


get_value = eval


def batch_get_value(tensors):
    """The values of a list of Tensors, as numpy arrays."""
    return [get_value(x) for x in tensors]


def set_value(x, value):
    """Overwrite the data of the Tensor ``x`` in place with ``value`` (same shape).

    ``x`` may also be a number read from an optimizer (``model.optimizer.lr``),
    which is then set, as Keras 2 scripts expect.

    Raises:
        TypeError: If ``x`` is neither a Tensor nor such a number.
        ValueError: If the shapes differ.
    """
    if isinstance(x, BoundNumber):
        setattr(x.owner, x.attribute, float(_host_value(value)))
        return
    if not isinstance(x, Tensor):
        raise TypeError(f'set_value needs a Tensor (a variable) to write into, got '
                        f'{type(x).__name__}; plain attributes are set by assignment')
    value = np.asarray(_host_value(value), dtype=x.dtype)
    if value.shape != x.shape:
        raise ValueError(f'set_value: the value has shape {value.shape}, the variable '
                         f'{getattr(x, "name", None) or ""} has shape {x.shape}')
    x.data[...] = x.xp.asarray(value)


def batch_set_value(tuples):
    """:func:`set_value` for each ``(variable, value)`` pair."""
    for x, value in tuples:
        set_value(x, value)


def zeros(shape, dtype=None, name=None):
    """A variable of zeros."""
    return variable(np.zeros(shape), dtype, name)


def ones(shape, dtype=None, name=None):
    """A variable of ones."""
    return variable(np.ones(shape), dtype, name)


def eye(size, dtype=None, name=None):
    """An identity-matrix variable: ``size`` is n, or (rows, columns)."""
    rows, columns = (size, size) if np.isscalar(size) else tuple(size)
    return variable(np.eye(rows, columns), dtype, name)


@recordable
def zeros_like(x, dtype=None, name=None):
    """Zeros of the shape (and dtype, unless given) of ``x``."""
    x = as_tensor(x)
    return Tensor.wrap(x.xp.zeros(x.shape, dtype or x.dtype))


@recordable
def ones_like(x, dtype=None, name=None):
    """Ones of the shape (and dtype, unless given) of ``x``."""
    x = as_tensor(x)
    return Tensor.wrap(x.xp.ones(x.shape, dtype or x.dtype))


@recordable
def identity(x, name=None):
    """``x`` itself."""
    return as_tensor(x)


@recordable
def cast(x, dtype):
    """``x`` converted to ``dtype`` (differentiable between floating types)."""
    x = as_tensor(x)
    return x if x.dtype == np.dtype(dtype) else F.cast(x, np.dtype(dtype))


def update(x, new_x):
    """The operation ``x = new_x`` (Keras 2's ``tf.assign``); it runs later (see the module).

    Args:
        x: A variable (a Tensor).
        new_x: Its new value: a Tensor, array or number of ``x``'s shape, or
            a symbolic tensor (for ``K.function``).
    """
    return Update(x, 'assign', new_x)


def update_add(x, increment):
    """The operation ``x += increment`` (Keras 2's ``tf.assign_add``); it runs later."""
    return Update(x, 'add', increment)


def update_sub(x, decrement):
    """The operation ``x -= decrement`` (Keras 2's ``tf.assign_sub``); it runs later."""
    return Update(x, 'sub', decrement)


def moving_average_update(x, value, momentum):
    """The operation ``x -= (x - value) * (1 - momentum)``: ``x`` moves toward ``value``.

    This is Keras 2.3.1's formula, a plain exponential moving average (Keras
    2.2.4's TensorFlow backend debiased it as if ``x`` had started at zero,
    which its Theano and CNTK backends did not; 2.3.1 dropped that). The
    difference is taken from ``x``'s value now (when ``value`` is a Tensor)
    or when a function runs it (a symbolic ``value``).
    """
    with no_grad():  # an update is no part of what is differentiated
        return Update(x, 'sub', (x - value) * (1.0 - momentum))


def _host_value(value):
    """The values of a Tensor, an array or nested numbers as a numpy array."""
    if isinstance(value, SymbolicTensor):
        raise TypeError(f'{value!r} has no value of its own here; the backend needs Tensors, '
                        f'arrays or numbers')
    return to_numpy(data_of(value))
