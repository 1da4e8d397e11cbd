"""TimeDistributed and Bidirectional: against per-step numpy and PyTorch's bidirectional LSTM."""

import json

import numpy as np
import pytest

from minidl.layers.conv import Conv2D
from minidl.layers.core import Dense, Dropout
from minidl.layers.rnn import reverse_time
from minidl.layers.input_layer import Input
from minidl.layers.recurrent import GRU, LSTM, SimpleRNN
from minidl.layers.serialization import deserialize, serialize
from minidl.layers.wrappers import Bidirectional, TimeDistributed
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_time_distributed_dense_applies_the_layer_at_every_step():
    x = _random(2, 5, 3)
    dense = Dense(4, activation='relu', bias_initializer='random_normal')
    layer = TimeDistributed(dense, name='td')
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(y.numpy(), np.maximum(x @ kernel + bias, 0), rtol=1e-5,
                               atol=1e-6)
    y.sum().backward()
    positive = (x @ kernel + bias > 0).astype(np.float32)
    np.testing.assert_allclose(dense.kernel.grad.numpy(),
                               np.einsum('btf,btu->fu', x, positive), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x_tensor.grad.numpy(), positive @ kernel.T, rtol=1e-5, atol=1e-6)
    assert layer.weights == dense.weights and layer.count_params() == 3 * 4 + 4
    assert layer(Input((None, 3))).shape == (None, None, 4)
    assert layer(_random(3, 7, 3)).shape == (3, 7, 4)


def test_time_distributed_conv_and_training_flag():
    conv = TimeDistributed(Conv2D(2, 3))
    assert conv(Input((4, 8, 8, 1))).shape == (None, 4, 6, 6, 2)
    assert conv(_random(2, 4, 8, 8, 1)).shape == (2, 4, 6, 6, 2)
    assert conv.count_params() == 3 * 3 * 2 + 2
    dropout = TimeDistributed(Dropout(0.5))
    x = np.ones((2, 3, 40), np.float32)
    np.testing.assert_array_equal(dropout(x).numpy(), x)
    assert (dropout(x, training=True).numpy() == 0).any()


def test_time_distributed_config_and_errors():
    layer = TimeDistributed(Dense(3, use_bias=False, name='inner'), name='td_config')
    config = json.loads(json.dumps(serialize(layer)))
    assert config['config']['layer']['class_name'] == 'Dense'
    clone = deserialize(config)
    assert isinstance(clone, TimeDistributed) and isinstance(clone.layer, Dense)
    assert clone.get_config() == layer.get_config()
    with pytest.raises(TypeError, match='Layer'):
        TimeDistributed('dense')
    with pytest.raises(ValueError, match='td_rank'):
        TimeDistributed(Dense(3), name='td_rank')(Input((4,)))


def _torch_bidirectional_lstm(torch, layer, features):
    module = torch.nn.LSTM(features, layer.forward_layer.units, batch_first=True,
                           bidirectional=True)
    weights = layer.get_weights()
    with torch.no_grad():
        for suffix, (kernel, recurrent_kernel, bias) in [('', weights[:3]),
                                                         ('_reverse', weights[3:])]:
            getattr(module, 'weight_ih_l0' + suffix).copy_(torch.tensor(kernel.T.copy()))
            getattr(module, 'weight_hh_l0' + suffix).copy_(torch.tensor(recurrent_kernel.T.copy()))
            getattr(module, 'bias_ih_l0' + suffix).copy_(torch.tensor(bias))
            getattr(module, 'bias_hh_l0' + suffix).zero_()
    return module


def _randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32)
                       for w in layer.get_weights()])


def test_bidirectional_lstm_matches_pytorch(torch):
    x = _random(3, 6, 4)
    layer = Bidirectional(LSTM(5, return_sequences=True))
    layer(Input((None, 4)))
    _randomize(layer)
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    upstream = _random(3, 6, 10, seed=2)
    (y * Tensor(upstream)).sum().backward()

    module = _torch_bidirectional_lstm(torch, layer, 4)
    x_torch = torch.tensor(x, requires_grad=True)
    expected, _ = module(x_torch)
    (expected * torch.tensor(upstream)).sum().backward()

    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x_tensor.grad.numpy(), x_torch.grad.numpy(), rtol=1e-4, atol=1e-5)
    grads = [w.grad.numpy() for w in layer.weights]
    for offset, suffix in [(0, ''), (3, '_reverse')]:
        np.testing.assert_allclose(grads[offset], getattr(
            module, 'weight_ih_l0' + suffix).grad.numpy().T, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(grads[offset + 1], getattr(
            module, 'weight_hh_l0' + suffix).grad.numpy().T, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(grads[offset + 2], getattr(
            module, 'bias_ih_l0' + suffix).grad.numpy(), rtol=1e-4, atol=1e-5)


def test_bidirectional_merge_modes_and_states(torch):
    x = _random(2, 5, 3)
    reference = Bidirectional(LSTM(4, return_sequences=True, return_state=True),
                              merge_mode=None)
    reference(x)
    _randomize(reference)
    module = _torch_bidirectional_lstm(torch, reference, 3)
    expected, (h, c) = module(torch.tensor(x))
    forward, backward = expected.detach().numpy()[..., :4], expected.detach().numpy()[..., 4:]
    h, c = h.detach().numpy(), c.detach().numpy()

    outputs = reference(x)
    assert len(outputs) == 6
    for got, want in zip(outputs, [forward, backward, h[0], c[0], h[1], c[1]]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    merges = {'concat': np.concatenate([forward, backward], -1), 'sum': forward + backward,
              'mul': forward * backward, 'ave': (forward + backward) / 2}
    for mode, want in merges.items():
        layer = Bidirectional(LSTM(4, return_sequences=True), merge_mode=mode,
                              weights=reference.get_weights())
        np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-5, atol=1e-5)
    last = Bidirectional(LSTM(4), weights=reference.get_weights())(x)
    np.testing.assert_allclose(last.numpy(), np.concatenate([h[0], h[1]], -1), rtol=1e-5,
                               atol=1e-5)


def test_bidirectional_weights_names_and_shapes():
    inner = LSTM(32, return_sequences=True)
    layer = Bidirectional(inner, name='bi')
    assert layer(Input((None, 8))).shape == (None, None, 64)
    assert layer.forward_layer.name == 'forward_' + inner.name
    assert layer.backward_layer.name == 'backward_' + inner.name
    assert not inner.built and layer.forward_layer is not inner
    assert layer.backward_layer.go_backwards and not layer.forward_layer.go_backwards
    assert layer.count_params() == 2 * 4 * (8 * 32 + 32 * 32 + 32) == 10496
    names = [w.name for w in layer.weights]
    assert names[0].startswith('forward_') and names[3].startswith('backward_')
    assert [n.split('/')[-1] for n in names] == ['kernel:0', 'recurrent_kernel:0', 'bias:0'] * 2
    gru = Bidirectional(GRU(32), merge_mode='sum')
    assert gru(Input((None, 8))).shape == (None, 32)
    assert gru.count_params() == 2 * 3 * (8 * 32 + 32 * 32 + 32)
    states = Bidirectional(GRU(3, return_state=True), merge_mode=None)(Input((5, 2)))
    assert [s.shape for s in states] == [(None, 3)] * 4
    started = Bidirectional(SimpleRNN(3), input_shape=(5, 2))
    assert started.batch_input_shape == (None, 5, 2)
    assert Bidirectional(SimpleRNN(3, input_shape=(5, 2))).batch_input_shape == (None, 5, 2)


def test_bidirectional_initial_state():
    x = _random(2, 4, 3)
    states = [_random(2, 5, seed=i) for i in range(4)]
    layer = Bidirectional(LSTM(5, return_sequences=True))
    y = layer(x, initial_state=states).numpy()
    forward = layer.forward_layer(x, initial_state=states[:2]).numpy()
    backward = layer.backward_layer(x, initial_state=states[2:]).numpy()[:, ::-1]
    np.testing.assert_array_equal(y, np.concatenate([forward, backward], -1))
    np.testing.assert_array_equal(layer([x] + states).numpy(), y)
    with pytest.raises(ValueError, match='even'):
        layer(x, initial_state=states[:3])


@pytest.mark.parametrize('merge_mode', ['concat', 'sum', None])
@pytest.mark.parametrize('return_sequences', [True, False])
def test_bidirectional_lstm_in_one_loop_equals_the_two_layers(merge_mode, return_sequences):
    x = Tensor(_random(2, 5, 3), requires_grad=True)
    layer = Bidirectional(LSTM(4, return_sequences=return_sequences, return_state=True),
                          merge_mode=merge_mode)
    layer(x)
    _randomize(layer)

    def gradients(outputs):
        loss = sum((out * Tensor(_random(*out.shape, seed=i))).sum()
                   for i, out in enumerate(outputs))
        for tensor in [x] + layer.weights:
            tensor.grad = None
        loss.backward()
        return [out.numpy() for out in outputs] + [t.grad.numpy() for t in [x] + layer.weights]

    fused = gradients(layer(x))  # one bidirectional_lstm
    separate = gradients(_separate_directions(layer, x))
    for a, b in zip(fused, separate):
        np.testing.assert_array_equal(a, b)


def _separate_directions(layer, x):
    """The Bidirectional's outputs from its two inner layers, called one after the other."""
    forward, *forward_states = layer.forward_layer(x)
    backward, *backward_states = layer.backward_layer(x)
    if layer.return_sequences:
        backward = reverse_time(backward)
    output = layer._merge(forward, backward)
    output = output if isinstance(output, list) else [output]
    return output + forward_states + backward_states


def test_bidirectional_lstm_with_dropout_trains_through_the_layers():
    x = _random(2, 5, 3)
    layer = Bidirectional(LSTM(4, return_sequences=True, dropout=0.5))
    layer(x)
    assert layer._fused(training=False) and not layer._fused(training=True)
    y = layer(Tensor(x), training=True)
    assert y.shape == (2, 5, 8) and not np.array_equal(y.numpy(), layer(x).numpy())


def test_bidirectional_config_round_trip():
    layer = Bidirectional(GRU(4, return_sequences=True, name='g'), merge_mode='ave',
                          name='bi_config')
    config = json.loads(json.dumps(serialize(layer)))
    inner = config['config']['layer']
    assert inner['class_name'] == 'GRU' and inner['config']['name'] == 'g'
    assert config['config']['merge_mode'] == 'ave'
    clone = deserialize(config)
    assert clone.get_config() == layer.get_config()
    assert clone.forward_layer.name == 'forward_g' and clone.backward_layer.name == 'backward_g'

    custom = Bidirectional(LSTM(3, name='f'), backward_layer=LSTM(3, go_backwards=True,
                                                                   name='b'), name='bi_custom')
    config = json.loads(json.dumps(serialize(custom)))
    assert config['config']['backward_layer']['config']['name'] == 'b'
    clone = deserialize(config)
    assert clone.backward_layer.name == 'backward_b' and clone.backward_layer.go_backwards


def test_bidirectional_errors():
    with pytest.raises(ValueError, match='merge_mode'):
        Bidirectional(LSTM(3), merge_mode='max')
    with pytest.raises(ValueError, match='recurrent'):
        Bidirectional(Dense(3))
    with pytest.raises(ValueError, match='go_backwards'):
        Bidirectional(LSTM(3), backward_layer=LSTM(3))
    with pytest.raises(ValueError, match='return_sequences'):
        Bidirectional(LSTM(3), backward_layer=LSTM(3, go_backwards=True, return_sequences=True))
    layer = Bidirectional(LSTM(3), name='bi_e')
    layer(_random(2, 4, 5))
    with pytest.raises(ValueError, match='bi_e'):
        layer(_random(2, 4, 6))
