"""``keras.utils.generic_utils``: custom objects found by name, and Keras 2's ``Progbar``."""

from minidl.registry import CustomObjectScope, custom_object_scope, get_custom_objects
from minidl.utils.progbar import Progbar

__all__ = ['CustomObjectScope', 'Progbar', 'custom_object_scope', 'get_custom_objects']
