"""``keras.engine.training``: the trainable ``Model``."""

from minidl.engine import Model

__all__ = ['Model']
