"""Projections applied to weights after each optimizer update (Keras 2's constraints).

A constraint takes a weight's array (numpy or CuPy, or a Tensor) and returns
the projected values of the same shape and dtype; the training loop writes
them back into the weight. ``Dense(64, kernel_constraint=constraints.max_norm(3))``.

The norm constraints work on slices along ``axis``: for a Dense kernel
``(in, out)`` the default ``axis=0`` constrains each unit's incoming weights;
for a Conv2D kernel ``(kh, kw, in, out)`` use ``axis=[0, 1, 2]``.
"""

from minidl.compute import get_array_module
from minidl.registry import Registry
from minidl.tensor import Tensor

# Keras's backend epsilon: keeps all-zero slices from dividing by zero.
_EPSILON = 1e-7


class Constraint:
    """Base class: ``constraint(weight)`` returns the projected weight (here unchanged)."""

    def __call__(self, weight):
        return weight

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _project(weight, projection):
    """``projection(array)`` on the weight's array, returned in the form it was given."""
    if isinstance(weight, Tensor):
        return Tensor.wrap(projection(weight.data))
    return projection(weight)


def _norms(array, axis):
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    return get_array_module(array).sqrt((array * array).sum(axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescale the slices whose L2 norm along ``axis`` exceeds ``max_value``.

    Args:
        max_value: Largest norm allowed.
        axis: Axis or axes along which norms are taken.
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, weight):
        def projection(array):
            norms = _norms(array, self.axis)
            return array * (norms.clip(0, self.max_value) / (_EPSILON + norms))
        return _project(weight, projection)

    def get_config(self):
        return {'max_value': self.max_value, 'axis': self.axis}


class NonNeg(Constraint):
    """Zero the negative weights."""

    def __call__(self, weight):
        return _project(weight, lambda array: array * (array >= 0))


class UnitNorm(Constraint):
    """Scale the slices along ``axis`` to unit L2 norm.

    Args:
        axis: Axis or axes along which norms are taken.
    """

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, weight):
        return _project(weight, lambda array: array / (_EPSILON + _norms(array, self.axis)))

    def get_config(self):
        return {'axis': self.axis}


class MinMaxNorm(Constraint):
    """Move the slices' L2 norms along ``axis`` towards [min_value, max_value].

    Each slice is rescaled to norm ``rate * clip(norm, min_value, max_value)
    + (1 - rate) * norm``: ``rate=1`` enforces the interval at once, smaller
    rates approach it gradually.

    Args:
        min_value: Smallest norm allowed.
        max_value: Largest norm allowed.
        rate: Fraction of the way to the interval taken per call.
        axis: Axis or axes along which norms are taken.
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, weight):
        def projection(array):
            norms = _norms(array, self.axis)
            wanted = self.rate * norms.clip(self.min_value, self.max_value) \
                + (1 - self.rate) * norms
            return array * (wanted / (_EPSILON + norms))
        return _project(weight, projection)

    def get_config(self):
        return {'min_value': self.min_value, 'max_value': self.max_value, 'rate': self.rate,
                'axis': self.axis}


# Keras 2's lowercase aliases.
max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm

REGISTRY = Registry('constraint', base=Constraint)
for _name, _cls in {'max_norm': MaxNorm, 'non_neg': NonNeg, 'unit_norm': UnitNorm,
                    'min_max_norm': MinMaxNorm}.items():
    REGISTRY.register(_cls, _name, _cls.__name__)


def deserialize(config, custom_objects=None):
    """The constraint for a name or a ``{'class_name', 'config'}`` dict.

    ``custom_objects`` maps the names of your own Constraint classes (or
    projection functions) to them.

    Raises:
        ValueError: For an unknown name or class name.
    """
    return REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """A constraint from None, a name, a ``{'class_name', 'config'}`` dict or a callable.

    Raises:
        ValueError: For an unknown name.
        TypeError: For anything else that is not callable.
    """
    return REGISTRY.get(identifier)


def serialize(constraint):
    """The ``{'class_name', 'config'}`` dict that :func:`get` turns back into ``constraint``.

    A plain function is serialized as its name, as in Keras.
    """
    return REGISTRY.serialize(constraint)
