"""Optimizers with Keras 2's names, arguments, defaults and update formulas.

``model.compile(optimizer='adam')`` or ``optimizer=minidl.optimizers.SGD(0.1,
momentum=0.9)``. ``get(identifier)`` resolves a name ('sgd', 'Adam'), a
``{'class_name', 'config'}`` dict or an instance; ``serialize`` /
``deserialize`` convert to and from such dicts. Learning-rate schedules are
in :mod:`minidl.optimizers.schedules`; write your own optimizer by
subclassing :class:`Optimizer` (its docstring gives the contract).
"""

from minidl.optimizers import schedules
from minidl.optimizers.adagrad import Adadelta, Adagrad
from minidl.optimizers.adam import Adam, AdamW, Nadam
from minidl.optimizers.optimizer import Optimizer
from minidl.optimizers.rmsprop import RMSprop
from minidl.optimizers.sgd import SGD

_CLASSES = {cls.__name__: cls for cls in [SGD, RMSprop, Adagrad, Adadelta, Adam, AdamW, Nadam]}


def serialize(optimizer):
    """An optimizer as its ``{'class_name', 'config'}`` dict."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f'cannot serialize {optimizer!r}: not an Optimizer')
    return {'class_name': type(optimizer).__name__, 'config': optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """A new optimizer from a ``{'class_name', 'config'}`` dict.

    Args:
        config: A dict from :func:`serialize`; the class name is matched
            case-insensitively ('adam' works too).
        custom_objects: Optional dict of user Optimizer (and schedule) classes by name.

    Raises:
        ValueError: For an unknown class name (the message lists the known ones).
    """
    if not (isinstance(config, dict) and 'class_name' in config):
        raise TypeError(f"an optimizer config is a dict with 'class_name' and 'config', "
                        f"got {config!r}")
    cls = _find_class(config['class_name'], custom_objects)
    return cls.from_config(dict(config.get('config', {})), custom_objects)


def get(identifier):
    """An optimizer from a name, a ``{'class_name', 'config'}`` dict or an instance.

    A name ('sgd', 'rmsprop', 'Adam', ...; case-insensitive) gives a new
    optimizer with the default arguments; an instance is returned as it is.

    Raises:
        ValueError: For an unknown name (the message lists the known ones).
        TypeError: For anything else.
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return _find_class(identifier, None)()
    raise TypeError(f'cannot interpret {identifier!r} as an optimizer: pass a name, a config '
                    f'dict or an Optimizer')


def _find_class(name, custom_objects):
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    by_lower_name = {class_name.lower(): cls for class_name, cls in _CLASSES.items()}
    cls = by_lower_name.get(str(name).lower())
    if cls is None:
        raise ValueError(f'unknown optimizer {name!r}; known: '
                         f'{", ".join(sorted(known.lower() for known in _CLASSES))}')
    return cls


__all__ = ['Adadelta', 'Adagrad', 'Adam', 'AdamW', 'Nadam', 'Optimizer', 'RMSprop', 'SGD',
           'deserialize', 'get', 'schedules', 'serialize']
