"""keras.engine.saving's path: preprocess_weights_for_loading between LSTM/GRU and their cuDNN
pairs, by Keras 2's rules (cuDNN's two biases add up to the plain one)."""

import numpy as np
import pytest

from minidl.engine import saving
from minidl.layers import GRU, LSTM, CuDNNGRU, CuDNNLSTM
from minidl.models import Sequential


def built(layer):
    Sequential([layer])
    return layer


@pytest.mark.parametrize('layer', [
    lambda: GRU(2, input_shape=(3, 5)), lambda: GRU(2, input_shape=(3, 5), reset_after=True),
    lambda: LSTM(2, input_shape=(3, 5))])
def test_weights_of_the_same_class_come_back_unchanged(layer):
    layer = built(layer())
    weights = layer.get_weights()
    for before, after in zip(weights, saving.preprocess_weights_for_loading(layer, weights)):
        np.testing.assert_array_equal(before, after)


def test_lstm_to_cudnn_and_back():
    lstm = built(LSTM(3, input_shape=(4, 5)))
    cudnn = built(CuDNNLSTM(3, input_shape=(4, 5)))
    weights = lstm.get_weights()
    converted = saving.preprocess_weights_for_loading(cudnn, weights)
    assert [w.shape for w in converted] == [w.shape for w in cudnn.get_weights()]
    # The plain bias is split into cuDNN's input and recurrent biases, which add up to it.
    np.testing.assert_allclose(converted[2][:12] + converted[2][12:], weights[2], rtol=1e-6)
    back = saving.preprocess_weights_for_loading(lstm, converted)
    for before, after in zip(weights, back):
        np.testing.assert_allclose(after, before, rtol=1e-6)


def test_gru_reset_after_to_cudnn_and_refusals():
    gru = built(GRU(2, input_shape=(3, 5), reset_after=True, recurrent_activation='sigmoid'))
    cudnn = built(CuDNNGRU(2, input_shape=(3, 5)))
    converted = saving.preprocess_weights_for_loading(cudnn, gru.get_weights())
    np.testing.assert_array_equal(converted[2], gru.get_weights()[2].reshape(-1))
    with pytest.raises(ValueError, match='Keras 1'):
        saving.preprocess_weights_for_loading(gru, gru.get_weights(), original_keras_version='1')
    with pytest.raises(ValueError, match='Theano'):
        saving.preprocess_weights_for_loading(gru, gru.get_weights(), original_backend='theano')
    # reshape: flat arrays of the right sizes take the weights' shapes.
    flat = [w.reshape(-1) for w in gru.get_weights()]
    for array, weight in zip(saving.preprocess_weights_for_loading(gru, flat, reshape=True),
                             gru.get_weights()):
        np.testing.assert_array_equal(array, weight)
