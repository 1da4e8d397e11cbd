"""Layers to and from ``{'class_name', 'config'}`` dicts, by registered class name only.

Deserialising builds only minidl's own layer classes (``Layer.registry``,
filled as they are defined) and the classes a caller passes in
``custom_objects`` or puts in the process-wide custom objects
(:mod:`minidl.registry`): a saved file names classes, it never carries code.

Classes found by name inside other configs (a wrapper's inner layer, a
model's layers, a layer's activation) see the ``custom_objects`` of the
enclosing call, as in Keras (:func:`~minidl.registry.custom_object_scope`).
"""

from minidl.layers.base import Layer


def serialize(layer):
    """``{'class_name': ..., 'config': layer.get_config()}``."""
    return Layer.registry.serialize(layer)


def deserialize(config, custom_objects=None):
    """The layer described by ``config`` (a ``{'class_name', 'config'}`` dict).

    Raises:
        ValueError: For a config of another form, a class that is neither
            minidl's nor a custom object, or a config the class refuses.
    """
    if not isinstance(config, dict) or not isinstance(config.get('class_name'), str):
        raise ValueError(f'a layer description must be a dict with "class_name" and "config", '
                         f'got {str(config)[:200]}')
    return Layer.registry.deserialize(config, custom_objects)
