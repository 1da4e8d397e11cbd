"""``keras.engine.topology``: where Keras 2 scripts find ``Layer`` and ``InputSpec``."""

from minidl.engine import Input, InputLayer, InputSpec, Layer, Network, get_source_inputs
from minidl.layers.symbolic import Node

__all__ = ['Input', 'InputLayer', 'InputSpec', 'Layer', 'Network', 'Node', 'get_source_inputs']
