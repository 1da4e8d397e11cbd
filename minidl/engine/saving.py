"""``keras.engine.saving``: Keras 2.2.4's module path of the model file functions.

They are :mod:`minidl.saving`'s; ``model_from_yaml`` refuses, as ``Model.to_yaml``
does, because reading YAML with a general loader can run code.
``preprocess_weights_for_loading`` converts recurrent weights between the
plain and cuDNN layers (:mod:`minidl.saving.rnn_weights`), as Keras 2's does.
"""

import math

import numpy as np

from minidl.saving import load_model, model_from_config, model_from_json, rnn_weights, save_model
from minidl.saving.model_json import model_from_yaml

__all__ = ['load_model', 'model_from_config', 'model_from_json', 'model_from_yaml',
           'preprocess_weights_for_loading', 'save_model']


def preprocess_weights_for_loading(layer, weights, original_keras_version=None,
                                   original_backend=None, reshape=False):
    """``weights`` (numpy arrays, one per ``layer.weights``) in ``layer``'s own layout.

    LSTM and GRU weights load into CuDNNLSTM and CuDNNGRU and back, also inside
    Bidirectional, TimeDistributed and nested models; weights of the layer's
    own class come back unchanged.

    Args:
        layer: The layer (or model) the weights are for.
        weights: The arrays, as a file holds them.
        original_keras_version: The Keras version that wrote them; Keras 1's
            layouts are not converted (a ValueError says so).
        original_backend: The backend that wrote them; Theano's flipped
            convolution kernels are not converted (a ValueError says so).
        reshape: Reshape each array to its weight's shape where the sizes agree.

    Returns:
        A new list of arrays.
    """
    if original_keras_version is not None and str(original_keras_version).startswith('1'):
        raise ValueError('preprocess_weights_for_loading: weights written by Keras 1 are not '
                         'converted; load them in Keras 2 and save them again')
    if original_backend == 'theano':
        raise ValueError("preprocess_weights_for_loading: weights written with Theano's "
                         "backend are not converted (its convolution kernels are flipped)")
    arrays = [np.asarray(weight) for weight in weights]
    if reshape:
        arrays = [array.reshape(tuple(weight.shape))
                  if array.size == math.prod(weight.shape) else array
                  for array, weight in zip(arrays, layer.weights)]
    return rnn_weights.convert(layer, arrays)
