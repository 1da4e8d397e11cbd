"""``keras.layers.embeddings``: where Keras 2 scripts import ``Embedding`` from."""

from minidl.layers.embedding import Embedding

__all__ = ['Embedding']
