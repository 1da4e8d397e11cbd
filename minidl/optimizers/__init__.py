"""Optimizers with Keras 2's names, arguments, defaults and update formulas.

``model.compile(optimizer='adam')`` or ``optimizer=minidl.optimizers.SGD(lr=0.1,
momentum=0.9)``. ``get(identifier)`` resolves a name ('sgd', 'Adam'; any
case), a ``{'class_name', 'config'}`` dict or an instance; ``serialize`` /
``deserialize`` convert to and from such dicts. Keras 2's lowercase names
(``optimizers.rmsprop(lr=0.01)``) are the classes. Learning-rate schedules
are in :mod:`minidl.optimizers.schedules`; write your own optimizer by
subclassing :class:`Optimizer` (its docstring gives the contract).
"""

from minidl.optimizers import schedules
from minidl.optimizers.adagrad_family import Adadelta, Adagrad
from minidl.optimizers.adam_family import Adam, Adamax, AdamW, Nadam
from minidl.optimizers.gradient_descent import SGD
from minidl.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minidl.optimizers.optimizer import Optimizer
from minidl.optimizers.rmsprop_family import RMSprop
from minidl.registry import Registry

# Keras 2's lowercase aliases.
sgd, rmsprop, adagrad, adadelta, adam, adamax, nadam = (
    SGD, RMSprop, Adagrad, Adadelta, Adam, Adamax, Nadam)

REGISTRY = Registry('optimizer', base=Optimizer, functions=False, case_sensitive=False,
                    none=Registry.REFUSED)
for _cls in (Adadelta, Adagrad, Adam, Adamax, AdamW, Nadam, RMSprop, SGD):
    REGISTRY.register(_cls, _cls.__name__.lower())
REGISTRY.register(LossScaleOptimizer)  # minidl.mixed_precision's, by its tf.keras name


def serialize(optimizer):
    """An optimizer as its ``{'class_name', 'config'}`` dict."""
    return REGISTRY.serialize(optimizer)


def deserialize(config, custom_objects=None):
    """A new optimizer from a ``{'class_name', 'config'}`` dict (or a name).

    Args:
        config: A dict from :func:`serialize`; minidl's class names are
            matched case-insensitively ('adam' works too).
        custom_objects: Optional dict of user Optimizer (and schedule) classes by name.

    Raises:
        ValueError: For an unknown class name (the message lists the known ones).
    """
    return REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """An optimizer from a name, a ``{'class_name', 'config'}`` dict or an instance.

    A name ('sgd', 'rmsprop', 'Adam', ...; case-insensitive) gives a new
    optimizer with the default arguments; an instance is returned as it is.

    Raises:
        ValueError: For an unknown name (the message lists the known ones).
        TypeError: For anything else.
    """
    return REGISTRY.get(identifier)


__all__ = ['Adadelta', 'Adagrad', 'Adam', 'AdamW', 'Adamax', 'LossScaleOptimizer', 'Nadam',
           'Optimizer', 'RMSprop', 'SGD', 'adadelta', 'adagrad', 'adam', 'adamax', 'deserialize',
           'get', 'nadam', 'rmsprop', 'schedules', 'serialize', 'sgd']
