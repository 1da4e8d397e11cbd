"""Keras 2's ``keras.engine`` module paths, for scripts that import from them.

``from minidl.engine import Layer, Input, InputSpec, Model`` and the older
``from minidl.engine.topology import Layer`` resolve to the same classes as
``minidl.layers`` and ``minidl.models``; nothing is defined here.
``minidl.engine.training_utils`` has the helpers of Keras 2.2.4's module of
that name that scripts import (``standardize_input_data``, ...).
"""

from minidl.layers import Input, InputLayer, InputSpec, Layer
from minidl.layers.symbolic import get_source_inputs
from minidl.models import Model, Network

__all__ = ['Input', 'InputLayer', 'InputSpec', 'Layer', 'Model', 'Network', 'get_source_inputs']
