"""``keras.utils.generic_utils``: custom objects found by name when loading and deserialising."""

from minidl.registry import CustomObjectScope, custom_object_scope, get_custom_objects

__all__ = ['CustomObjectScope', 'custom_object_scope', 'get_custom_objects']
