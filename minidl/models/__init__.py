"""Models: ``Sequential``, the functional ``Model``, and ``load_model``.

The training loop is in :mod:`minidl.models.loop`; its extension point for
distributed training is :class:`minidl.models.strategy.Strategy`.
"""

from minidl.models.model import Model
from minidl.models.network import Network
from minidl.models.sequential import Sequential
from minidl.models.strategy import Strategy
from minidl.saving import load_model

__all__ = ['Model', 'Network', 'Sequential', 'Strategy', 'load_model']
