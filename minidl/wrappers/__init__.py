"""Keras 2's ``keras.wrappers``: ``scikit_learn`` (``KerasClassifier``, ``KerasRegressor``)."""

from minidl.wrappers import scikit_learn

__all__ = ['scikit_learn']
