"""``keras.engine.base_layer``: the layer contract's classes."""

from minidl.engine import InputSpec, Layer
from minidl.layers.symbolic import Node

__all__ = ['InputSpec', 'Layer', 'Node']
