"""Models: ``Sequential``, the functional ``Model``, and Keras 2's model functions.

The training loop is in :mod:`minidl.models.loop`; its extension point for
distributed training is :class:`minidl.models.strategy.Strategy`.
"""

from minidl.models.cloning import clone_model
from minidl.models.model import Model
from minidl.models.network import Network
from minidl.models.sequential import Sequential
from minidl.models.strategy import Strategy
from minidl.saving import load_model, model_from_config, model_from_json, save_model
from minidl.saving.model_json import model_from_yaml

__all__ = ['Model', 'Network', 'Sequential', 'Strategy', 'clone_model', 'load_model',
           'model_from_config', 'model_from_json', 'model_from_yaml', 'save_model']
