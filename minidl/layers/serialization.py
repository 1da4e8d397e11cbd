"""Layers to and from ``{'class_name', 'config'}`` dicts, by registered class name only.

Deserialising builds only minidl's own layer classes (``Layer.registry``)
and the classes a caller passes in ``custom_objects``: a saved file names
classes, it never carries code.

Classes found by name inside other configs (a wrapper's inner layer, a
model's layers) see the ``custom_objects`` of the enclosing call through
:func:`custom_object_scope`, as in Keras.
"""

import contextlib

from minidl.layers.base import Layer

_scopes = [{}]


@contextlib.contextmanager
def custom_object_scope(custom_objects):
    """Within this context, ``custom_objects`` are found by name when deserialising."""
    _scopes.append({**_scopes[-1], **(custom_objects or {})})
    try:
        yield
    finally:
        _scopes.pop()


def serialize(layer):
    """``{'class_name': ..., 'config': layer.get_config()}``."""
    return {'class_name': type(layer).__name__, 'config': layer.get_config()}


def layer_class(class_name, custom_objects=None):
    """The class registered (or given in ``custom_objects``) under ``class_name``."""
    if not isinstance(class_name, str):
        raise ValueError(f'a layer class name must be a string, got {class_name!r}')
    known = {**_scopes[-1], **(custom_objects or {})}
    cls = known.get(class_name) or Layer.registry.get(class_name)
    if cls is None:
        raise ValueError(f'unknown layer class {class_name!r}: it is not one of minidl\'s '
                         f'layers; if it is your own, pass it in custom_objects='
                         f'{{{class_name!r}: {class_name}}}')
    return cls


def deserialize(config, custom_objects=None):
    """The layer described by ``config`` (a ``{'class_name', 'config'}`` dict)."""
    if not isinstance(config, dict) or 'class_name' not in config:
        raise ValueError(f'a layer description must be a dict with "class_name" and "config", '
                         f'got {str(config)[:200]}')
    cls = layer_class(config['class_name'], custom_objects)
    arguments = config.get('config', {})
    if not isinstance(arguments, dict):
        raise ValueError(f'the config of a {config["class_name"]} layer must be a dict')
    with custom_object_scope(custom_objects):
        try:
            return cls.from_config(arguments)
        except TypeError as error:
            raise ValueError(f'cannot make a {config["class_name"]} layer from its config: '
                             f'{error}') from None
