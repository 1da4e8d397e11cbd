"""Projections applied to weights after each optimizer update (Keras 2's constraints).

A constraint takes the weight's array and returns the projected array; the
training loop writes it back in place.
"""

from minidl.backend import get_array_module

_EPSILON = 1e-7


class Constraint:
    """Base class: ``constraint(array)`` returns the projected array."""

    def __call__(self, array):
        return array

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """Rescale slices whose L2 norm along ``axis`` exceeds ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, array):
        xp = get_array_module(array)
        norms = xp.sqrt((array * array).sum(axis=self.axis, keepdims=True))
        wanted = xp.clip(norms, 0, self.max_value)
        return array * (wanted / (_EPSILON + norms))

    def get_config(self):
        return {'max_value': self.max_value, 'axis': self.axis}


class NonNeg(Constraint):
    """Zero out negative weights."""

    def __call__(self, array):
        return array * (array >= 0)


class UnitNorm(Constraint):
    """Scale slices along ``axis`` to unit L2 norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, array):
        xp = get_array_module(array)
        return array / (_EPSILON + xp.sqrt((array * array).sum(axis=self.axis, keepdims=True)))

    def get_config(self):
        return {'axis': self.axis}


class MinMaxNorm(Constraint):
    """Pull slice norms along ``axis`` into [min_value, max_value] at ``rate``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, array):
        xp = get_array_module(array)
        norms = xp.sqrt((array * array).sum(axis=self.axis, keepdims=True))
        wanted = self.rate * xp.clip(norms, self.min_value, self.max_value) \
            + (1 - self.rate) * norms
        return array * (wanted / (_EPSILON + norms))

    def get_config(self):
        return {'min_value': self.min_value, 'max_value': self.max_value, 'rate': self.rate,
                'axis': self.axis}


_CLASSES = {'MaxNorm': MaxNorm, 'NonNeg': NonNeg, 'UnitNorm': UnitNorm,
            'MinMaxNorm': MinMaxNorm, 'max_norm': MaxNorm, 'non_neg': NonNeg,
            'unit_norm': UnitNorm, 'min_max_norm': MinMaxNorm}


def get(identifier):
    """A constraint from None, a name, a ``{'class_name', 'config'}`` dict or an instance."""
    if identifier is None or isinstance(identifier, Constraint):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _CLASSES:
            raise ValueError(f'unknown constraint {identifier!r}; known: {", ".join(_CLASSES)}')
        return _CLASSES[identifier]()
    if isinstance(identifier, dict) and identifier.get('class_name') in _CLASSES:
        return _CLASSES[identifier['class_name']].from_config(identifier.get('config', {}))
    if callable(identifier) and not isinstance(identifier, type):
        return identifier
    raise ValueError(f'cannot interpret {identifier!r} as a constraint')


def serialize(constraint):
    """The ``{'class_name', 'config'}`` dict :func:`get` turns back into ``constraint``."""
    if constraint is None:
        return None
    return {'class_name': type(constraint).__name__, 'config': constraint.get_config()}
