"""Weight penalties added to the loss, with Keras 2's names and defaults.

A regularizer is called on a weight tensor and returns a scalar tensor,
built from ``minidl.functions`` so that its gradient reaches the weight:
``Dense(64, kernel_regularizer=regularizers.l2(1e-4))``.

``get(identifier)`` resolves None, a name ('l1', 'l2', 'l1_l2'), a
``{'class_name', 'config'}`` dict, an instance or a callable;
``serialize(regularizer)`` gives the dict back.
"""

import math
import numbers

from minidl import functions as F
from minidl.registry import Registry
from minidl.tensor import Tensor


class Regularizer:
    """Base class: ``regularizer(weight)`` returns a scalar Tensor penalty.

    Subclasses define ``__call__`` and, to be saved with a model,
    ``get_config`` (the arguments that ``from_config`` passes back to
    ``__init__``).
    """

    def __call__(self, weight):
        raise NotImplementedError(f'{type(self).__name__} must define __call__(weight)')

    def get_config(self):
        raise NotImplementedError(f'{type(self).__name__} must define get_config() to be '
                                  f'serialized')

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_factor(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value):
        raise ValueError(f'{owner}: {name} must be a finite number, got {value!r}')
    return float(value)


class L1L2(Regularizer):
    """``l1 * sum(|w|) + l2 * sum(w ** 2)``.

    Args:
        l1: L1 factor (None means 0).
        l2: L2 factor (None means 0).
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _check_factor(type(self).__name__, 'l1', 0.0 if l1 is None else l1)
        self.l2 = _check_factor(type(self).__name__, 'l2', 0.0 if l2 is None else l2)

    def __call__(self, weight):
        weight = weight if isinstance(weight, Tensor) else Tensor(weight)
        penalty = None
        if self.l1:
            penalty = self.l1 * F.sum(F.abs(weight))
        if self.l2:
            squares = self.l2 * F.sum(weight * weight)
            penalty = squares if penalty is None else penalty + squares
        if penalty is None:  # Keras returns a constant 0 when both factors are 0
            penalty = Tensor.wrap(weight.xp.zeros((), weight.dtype))
        return penalty

    def get_config(self):
        return {'l1': self.l1, 'l2': self.l2}


class L1(L1L2):
    """``l1 * sum(|w|)``.

    Args:
        l1: L1 factor (None means 0.01).
    """

    def __init__(self, l1=0.01):
        super().__init__(l1=0.01 if l1 is None else l1)

    def get_config(self):
        return {'l1': self.l1}


class L2(L1L2):
    """``l2 * sum(w ** 2)``.

    Args:
        l2: L2 factor (None means 0.01).
    """

    def __init__(self, l2=0.01):
        super().__init__(l2=0.01 if l2 is None else l2)

    def get_config(self):
        return {'l2': self.l2}


# Keras 2's lowercase names: l1 and l2 are the classes, l1_l2 a function whose
# defaults (0.01 each) differ from L1L2's (0 each).
l1 = L1
l2 = L2


def l1_l2(l1=0.01, l2=0.01):
    """An :class:`L1L2` with both penalties, 0.01 each by default."""
    return L1L2(l1=l1, l2=l2)


REGISTRY = Registry('regularizer', base=Regularizer)
REGISTRY.register(L1, 'l1')
REGISTRY.register(L2, 'l2')
REGISTRY.register(l1_l2, factory=True)
for _cls in (L1, L2, L1L2):
    REGISTRY.register(_cls)


def deserialize(config, custom_objects=None):
    """The regularizer for a name or a ``{'class_name', 'config'}`` dict.

    ``custom_objects`` maps the names of your own Regularizer classes (or
    penalty functions) to them.

    Raises:
        ValueError: For an unknown name or class name.
    """
    return REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """A regularizer from None, a name, a ``{'class_name', 'config'}`` dict or a callable.

    Raises:
        ValueError: For an unknown name.
        TypeError: For anything else that is not callable.
    """
    return REGISTRY.get(identifier)


def serialize(regularizer):
    """The ``{'class_name', 'config'}`` dict that :func:`get` turns back into ``regularizer``.

    A plain function is serialized as its name, as in Keras (``get`` finds it
    again through ``custom_objects``).
    """
    return REGISTRY.serialize(regularizer)
