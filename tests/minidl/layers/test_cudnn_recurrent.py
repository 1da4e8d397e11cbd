"""CuDNNLSTM and CuDNNGRU: Keras 2's weights and counts, PyTorch's numbers (cuDNN's equations
and cuDNN's reading of Keras's kernel blocks)."""

import numpy as np
import pytest

from minidl.layers import CuDNNGRU, CuDNNLSTM, Embedding, Input
from minidl.models import Sequential

torch = pytest.importorskip('torch')


def _randomized(layer, x, seed=1):
    layer(x)
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.normal(size=w.shape).astype('float32') * 0.3
                       for w in layer.get_weights()])
    return layer.get_weights()


def _cudnn_matrix(kernel, gates):
    """What cuDNN (and so PyTorch's weight_ih / weight_hh) sees of a Keras CuDNN kernel:
    each gate block, flattened in C order, read as a (units, rows) matrix; blocks stacked."""
    rows, units = kernel.shape[0], kernel.shape[1] // gates
    return np.concatenate([block.reshape(units, rows) for block in np.hsplit(kernel, gates)])


def _torch_gate_order(array, units):
    """Keras's GRU blocks z, r, h as PyTorch's r, z, n."""
    return np.concatenate([array[..., units:2 * units], array[..., :units],
                           array[..., 2 * units:]], axis=-1)


@pytest.mark.parametrize('cls, per_gate_block', [(CuDNNLSTM, 4), (CuDNNGRU, 3)])
def test_weights_and_parameter_counts_are_keras_2s(cls, per_gate_block):
    model = Sequential([cls(8, input_shape=(6, 5))])
    # Kernel, recurrent kernel, and cuDNN's two biases (input, recurrent) per gate block.
    assert model.count_params() == per_gate_block * (8 * (5 + 8) + 2 * 8)
    assert [w.shape for w in model.weights] == [
        (5, per_gate_block * 8), (8, per_gate_block * 8), (2 * per_gate_block * 8,)]
    config = model.layers[0].get_config()
    assert 'activation' not in config and 'dropout' not in config
    assert cls.from_config(config).get_config() == config


def test_cudnn_lstm_equals_torch_lstm_with_its_two_biases():
    x = np.random.default_rng(0).normal(size=(2, 6, 5)).astype('float32')
    layer = CuDNNLSTM(8, return_sequences=True)
    kernel, recurrent, bias = _randomized(layer, x)
    reference = torch.nn.LSTM(5, 8, batch_first=True)
    with torch.no_grad():
        reference.weight_ih_l0.copy_(torch.tensor(_cudnn_matrix(kernel, 4)))
        reference.weight_hh_l0.copy_(torch.tensor(_cudnn_matrix(recurrent, 4)))
        reference.bias_ih_l0.copy_(torch.tensor(bias[:32]))
        reference.bias_hh_l0.copy_(torch.tensor(bias[32:]))
    expected = reference(torch.tensor(x))[0].detach().numpy()
    np.testing.assert_allclose(layer(x).numpy(), expected, atol=1e-6)


def test_cudnn_gru_equals_torch_gru():
    x = np.random.default_rng(0).normal(size=(2, 6, 5)).astype('float32')
    layer = CuDNNGRU(8, return_sequences=True)
    kernel, recurrent, bias = _randomized(layer, x)
    reference = torch.nn.GRU(5, 8, batch_first=True)
    with torch.no_grad():
        reference.weight_ih_l0.copy_(torch.tensor(_torch_gate_order(_cudnn_matrix(kernel, 3).T,
                                                                     8).T))
        reference.weight_hh_l0.copy_(torch.tensor(
            _torch_gate_order(_cudnn_matrix(recurrent, 3).T, 8).T))
        reference.bias_ih_l0.copy_(torch.tensor(_torch_gate_order(bias[:24], 8)))
        reference.bias_hh_l0.copy_(torch.tensor(_torch_gate_order(bias[24:], 8)))
    expected = reference(torch.tensor(x))[0].detach().numpy()
    np.testing.assert_allclose(layer(x).numpy(), expected, atol=1e-6)


def test_unit_forget_bias_starts_the_recurrent_forget_block_at_one():
    layer = CuDNNLSTM(4)
    layer.build((None, 3, 2))
    expected = np.zeros(32, 'float32')
    expected[20:24] = 1  # the recurrent bias's forget block, as Keras 2 sets it
    np.testing.assert_array_equal(layer.get_weights()[2], expected)


def test_cudnn_layers_refuse_masks_as_keras_2s_do():
    words = Input((4,), dtype='int32')
    with pytest.raises(TypeError, match='does not support masking'):
        CuDNNLSTM(3)(Embedding(10, 2, mask_zero=True)(words))
