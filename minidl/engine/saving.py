"""``keras.engine.saving``: Keras 2.2.4's module path of the model file functions.

They are :mod:`minidl.saving`'s; ``model_from_yaml`` refuses, as ``Model.to_yaml``
does, because reading YAML with a general loader can run code.
"""

from minidl.saving import load_model, model_from_config, model_from_json, save_model
from minidl.saving.model_json import model_from_yaml

__all__ = ['load_model', 'model_from_config', 'model_from_json', 'model_from_yaml',
           'save_model']
