"""SimpleRNN, GRU and LSTM against PyTorch (and the Keras GRU formula where PyTorch has none)."""

import itertools
import json

import numpy as np
import pytest

from minidl.layers.rnn_cells import state_sizes
from minidl.layers.core import Dense
from minidl.layers.input_layer import Input
from minidl.layers.recurrent import GRU, LSTM, SimpleRNN
from minidl.models import Model
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32)
                       for w in layer.get_weights()])


def _gru_blocks_to_torch(array, units):
    """Keras's gate blocks z, r, h along the last axis -> PyTorch's r, z, n."""
    z, r, h = (array[..., i * units:(i + 1) * units] for i in range(3))
    return np.concatenate([r, z, h], axis=-1)


def torch_module(torch, layer, features):
    """A PyTorch RNN/GRU/LSTM holding ``layer``'s weights (batch_first)."""
    kernel, recurrent_kernel, bias = layer.get_weights()
    units = layer.units
    if isinstance(layer, LSTM):
        module = torch.nn.LSTM(features, units, batch_first=True)
        input_bias, recurrent_bias = bias, np.zeros_like(bias)
    elif isinstance(layer, GRU):
        module = torch.nn.GRU(features, units, batch_first=True)
        kernel = _gru_blocks_to_torch(kernel, units)
        recurrent_kernel = _gru_blocks_to_torch(recurrent_kernel, units)
        input_bias, recurrent_bias = _gru_blocks_to_torch(bias, units)
    else:
        module = torch.nn.RNN(features, units, batch_first=True)
        input_bias, recurrent_bias = bias, np.zeros_like(bias)
    with torch.no_grad():
        for name, value in [('weight_ih_l0', kernel.T), ('weight_hh_l0', recurrent_kernel.T),
                            ('bias_ih_l0', input_bias), ('bias_hh_l0', recurrent_bias)]:
            getattr(module, name).copy_(torch.tensor(np.ascontiguousarray(value)))
    return module


def _torch_grads(torch, layer, module):
    """PyTorch's weight gradients in ``layer``'s layout and order."""
    kernel = module.weight_ih_l0.grad.numpy().T
    recurrent = module.weight_hh_l0.grad.numpy().T
    input_bias, recurrent_bias = module.bias_ih_l0.grad.numpy(), module.bias_hh_l0.grad.numpy()
    if isinstance(layer, GRU):
        def restore(array):  # r, z, n -> z, r, h: swapping the first two blocks again
            return _gru_blocks_to_torch(array, layer.units)
        return [restore(kernel), restore(recurrent),
                np.stack([restore(input_bias), restore(recurrent_bias)])]
    return [kernel, recurrent, input_bias]


def _compare(torch, layer, x, go_backwards=False, with_state=False):
    """Run ``layer`` (return_sequences, return_state) and its PyTorch twin; compare all."""
    units, batch = layer.units, x.shape[0]
    states = [_random(batch, units, seed=5 + i) for i in range(len(state_sizes(layer.cell)))]
    module = torch_module(torch, layer, x.shape[-1])
    x_tensor = Tensor(x, requires_grad=True)
    state_tensors = [Tensor(s, requires_grad=True) for s in states]
    outputs = layer(x_tensor, initial_state=state_tensors if with_state else None)
    sequence, finals = outputs[0], outputs[1:]
    upstream = [_random(*t.shape, seed=10 + i) for i, t in enumerate(outputs)]
    sum(((t * Tensor(u)).sum() for t, u in zip(outputs, upstream)), Tensor(0.0)).backward()

    x_torch = torch.tensor(x, requires_grad=True)
    states_torch = [torch.tensor(s[None], requires_grad=True) for s in states]
    torch_input = torch.flip(x_torch, [1]) if go_backwards else x_torch
    initial = None
    if with_state:
        initial = tuple(states_torch) if isinstance(layer, LSTM) else states_torch[0]
    expected_sequence, expected_finals = module(torch_input, initial)
    expected_finals = [f[0] for f in (expected_finals if isinstance(layer, LSTM)
                                      else (expected_finals,))]
    expected = [expected_sequence] + expected_finals
    sum((e * torch.tensor(u)).sum() for e, u in zip(expected, upstream)).backward()

    for got, want in zip([sequence] + finals, expected):
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x_tensor.grad.numpy(), x_torch.grad.numpy(), rtol=1e-4, atol=1e-5)
    for weight, want in zip(layer.weights, _torch_grads(torch, layer, module)):
        np.testing.assert_allclose(weight.grad.numpy(), want, rtol=1e-4, atol=1e-5)
    if with_state:
        for state, want in zip(state_tensors, states_torch):
            np.testing.assert_allclose(state.grad.numpy(), want.grad.numpy()[0],
                                       rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('cls', [SimpleRNN, GRU, LSTM])
@pytest.mark.parametrize('go_backwards, with_state', [(False, False), (False, True),
                                                       (True, True)],
                         ids=['forward', 'initial_state', 'go_backwards'])
def test_recurrent_layers_match_pytorch(torch, cls, go_backwards, with_state):
    # PyTorch's GRU applies the reset gate after the recurrent product.
    options = {'reset_after': True} if cls is GRU else {}
    layer = cls(6, return_sequences=True, return_state=True, go_backwards=go_backwards, **options)
    layer(Input((None, 5)))
    _randomize(layer)
    _compare(torch, layer, _random(3, 7, 5), go_backwards, with_state)


def _keras_gru_reset_before(x, kernel, recurrent_kernel, bias, torch):
    """The Keras GRU (reset_after=False) step by step, written in PyTorch ops."""
    units = recurrent_kernel.shape[0]
    h = torch.zeros(x.shape[0], units, dtype=x.dtype)
    outputs = []
    for t in range(x.shape[1]):
        projected = x[:, t] @ kernel + bias
        z = torch.sigmoid(projected[:, :units] + h @ recurrent_kernel[:, :units])
        r = torch.sigmoid(projected[:, units:2 * units]
                          + h @ recurrent_kernel[:, units:2 * units])
        candidate = torch.tanh(projected[:, 2 * units:] + (r * h) @ recurrent_kernel[:, 2 * units:])
        h = z * h + (1 - z) * candidate
        outputs.append(h)
    return torch.stack(outputs, 1)


def test_gru_reset_before_matches_the_keras_formula(torch):
    layer = GRU(4, reset_after=False, return_sequences=True)
    layer(Input((None, 3)))
    _randomize(layer)
    x = _random(2, 5, 3)
    x_tensor = Tensor(x, requires_grad=True)
    y = layer(x_tensor)
    upstream = _random(2, 5, 4, seed=3)
    (y * Tensor(upstream)).sum().backward()

    weights = [torch.tensor(w, requires_grad=True) for w in layer.get_weights()]
    x_torch = torch.tensor(x, requires_grad=True)
    expected = _keras_gru_reset_before(x_torch, *weights, torch)
    (expected * torch.tensor(upstream)).sum().backward()

    assert layer.bias.shape == (12,)
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x_tensor.grad.numpy(), x_torch.grad.numpy(), rtol=1e-4, atol=1e-5)
    for weight, want in zip(layer.weights, weights):
        np.testing.assert_allclose(weight.grad.numpy(), want.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_parameter_counts_and_weight_layouts():
    lstm = LSTM(32, name='lstm_p')
    lstm(Input((None, 8)))
    assert lstm.count_params() == 4 * (8 * 32 + 32 * 32 + 32) == 5248
    assert [w.name for w in lstm.weights] == [
        'lstm_p/kernel:0', 'lstm_p/recurrent_kernel:0', 'lstm_p/bias:0']
    assert [w.shape for w in lstm.weights] == [(8, 128), (32, 128), (128,)]
    gru = GRU(32, reset_after=True)
    gru(Input((None, 8)))
    assert gru.count_params() == 3 * (8 * 32 + 32 * 32 + 2 * 32)
    assert gru.weights[2].shape == (2, 96)
    gru_before = GRU(32)  # Keras 2's default, reset_after=False
    gru_before(Input((None, 8)))
    assert gru_before.count_params() == 3 * (8 * 32 + 32 * 32 + 32)
    rnn = SimpleRNN(32, use_bias=False)
    rnn(Input((None, 8)))
    assert rnn.count_params() == 8 * 32 + 32 * 32 and len(rnn.weights) == 2


def test_initial_weights_follow_keras():
    lstm = LSTM(5)
    lstm(Input((None, 3)))
    kernel, recurrent_kernel, bias = lstm.get_weights()
    # unit_forget_bias: the forget block (second of i, f, c, o) starts at one.
    np.testing.assert_array_equal(bias, np.repeat([0.0, 1.0, 0.0, 0.0], 5))
    np.testing.assert_allclose(recurrent_kernel @ recurrent_kernel.T, np.eye(5), atol=1e-5)
    limit = np.sqrt(6 / (3 + 20))  # glorot_uniform
    assert np.abs(kernel).max() <= limit and kernel.std() > limit / 4
    plain = LSTM(5, unit_forget_bias=False, bias_initializer='ones')
    plain(Input((None, 3)))
    np.testing.assert_array_equal(plain.get_weights()[2], np.ones(20))


def test_output_shapes_symbolic_and_eager():
    x = _random(2, 7, 8)
    cases = [
        (LSTM(4), (None, 4), (2, 4)),
        (GRU(4, return_sequences=True), (None, None, 4), (2, 7, 4)),
        (SimpleRNN(4, return_sequences=True, time_major=True), (None, None, 4), (7, 2, 4)),
    ]
    for layer, symbolic, eager in cases:
        assert layer(Input((None, 8))).shape == symbolic
        source = x.transpose(1, 0, 2) if layer.time_major else x
        assert layer(source).shape == eager == layer.compute_output_shape(source.shape)
    states = LSTM(4, return_state=True)(Input((None, 8)))
    assert [s.shape for s in states] == [(None, 4)] * 3
    states = GRU(4, return_sequences=True, return_state=True)(Input((5, 8)))
    assert [s.shape for s in states] == [(None, 5, 4), (None, 4)]
    # The time length may change from call to call.
    layer = LSTM(3, return_sequences=True)
    assert layer(_random(2, 4, 8)).shape == (2, 4, 3) and layer(x).shape == (2, 7, 3)


def test_time_major_matches_batch_major():
    x = _random(3, 6, 4)
    batch_major = GRU(5, return_sequences=True, return_state=True)
    batch_major(x)
    time_major = GRU(5, return_sequences=True, return_state=True, time_major=True)
    time_major(x.transpose(1, 0, 2))
    time_major.set_weights(batch_major.get_weights())
    expected = batch_major(x)
    got = time_major(x.transpose(1, 0, 2))
    np.testing.assert_array_equal(got[0].numpy(), expected[0].numpy().transpose(1, 0, 2))
    np.testing.assert_array_equal(got[1].numpy(), expected[1].numpy())


def test_initial_states_in_the_input_list():
    x, h, c = _random(2, 4, 3), _random(2, 5, seed=1), _random(2, 5, seed=2)
    layer = LSTM(5, return_sequences=True)
    keyword = layer(x, initial_state=[h, c]).numpy()
    np.testing.assert_array_equal(layer([x, h, c]).numpy(), keyword)
    assert not np.allclose(layer(x).numpy(), keyword)
    with pytest.raises(ValueError, match='twice'):
        layer([x, h, c], initial_state=[h, c])


def test_functional_seq2seq_with_symbolic_initial_state():
    encoder_inputs = Input((None, 6))
    _, h, c = LSTM(8, return_state=True, name='encoder')(encoder_inputs)
    decoder_inputs = Input((None, 4))
    decoder = LSTM(8, return_sequences=True, name='decoder')
    sequence = decoder(decoder_inputs, initial_state=[h, c])
    dense = Dense(4, activation='softmax')
    outputs = dense(sequence)
    assert outputs.shape == (None, None, 4)
    model = Model([encoder_inputs, decoder_inputs], outputs)

    source, target = _random(2, 5, 6), _random(2, 3, 4, seed=1)
    predicted = model([source, target]).numpy()
    _, h_value, c_value = model.get_layer('encoder')(source)
    expected = dense(decoder(target, initial_state=[h_value, c_value])).numpy()
    np.testing.assert_allclose(predicted, expected, rtol=1e-6, atol=1e-7)
    assert predicted.shape == (2, 3, 4)


def test_dropout_uses_one_mask_per_sample_for_all_steps():
    x = _random(2, 5, 3)
    layer = LSTM(4, dropout=0.5, return_sequences=True)
    reference = layer(x).numpy()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), reference)
    layer.generator.seed(3)
    dropped = layer(x, training=True).numpy()
    layer.generator.seed(3)
    np.testing.assert_array_equal(layer(x, training=True).numpy(), dropped)
    # Some mask of shape (batch, 1, features), kept entries scaled by 2, explains the output.
    matches = [mask for mask in itertools.product([0.0, 2.0], repeat=6)
               if np.allclose(layer(x * np.reshape(mask, (2, 1, 3)).astype(np.float32)).numpy(),
                              dropped, rtol=1e-6, atol=1e-7)]
    assert len(matches) == 1 and not np.allclose(dropped, reference)


@pytest.mark.parametrize('cls', [SimpleRNN, GRU, LSTM])
def test_config_round_trip(cls):
    layer = cls(3, return_sequences=True, go_backwards=True, dropout=0.25,
                kernel_regularizer='l2', recurrent_initializer='glorot_normal',
                name=f'{cls.__name__.lower()}_config')
    config = json.loads(json.dumps(layer.get_config()))
    assert config['units'] == 3 and config['activation'] == 'tanh'
    assert config['go_backwards'] is True and config['dropout'] == 0.25
    assert config['recurrent_dropout'] == 0.0 and config['stateful'] is False
    clone = cls.from_config(config)
    assert clone.get_config() == layer.get_config()
    clone(Input((None, 2)))
    assert len(clone.losses) == 1  # the kernel's L2 penalty
    if cls is not SimpleRNN:
        assert config['recurrent_activation'] == 'sigmoid' and config['implementation'] == 2
    if cls is GRU:
        assert config['reset_after'] is False
    if cls is LSTM:
        assert config['unit_forget_bias'] is True


def test_simple_rnn_relu_and_linear():
    x = _random(2, 3, 4)
    for activation, function in [('relu', lambda v: np.maximum(v, 0)), (None, lambda v: v)]:
        layer = SimpleRNN(3, activation=activation, return_sequences=True)
        y = layer(x).numpy()
        kernel, recurrent_kernel, bias = layer.get_weights()
        h = np.zeros((2, 3), np.float32)
        for t in range(3):
            h = function(x[:, t] @ kernel + h @ recurrent_kernel + bias)
            np.testing.assert_allclose(y[:, t], h, rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match='units'):
        LSTM(0)
    with pytest.raises(ValueError, match='recurrent_dropout'):
        GRU(4, recurrent_dropout=-0.2)
    with pytest.raises(ValueError, match='dropout'):
        SimpleRNN(4, dropout=1.0)
    with pytest.raises(ValueError, match='implementation'):
        LSTM(4, implementation=3)
    layer = LSTM(4, name='lstm_e')
    layer(_random(2, 3, 5))
    with pytest.raises(ValueError, match='lstm_e'):
        layer(_random(2, 3, 6))
    with pytest.raises(ValueError, match='lstm_e'):
        layer(_random(2, 5))
    with pytest.raises(ValueError, match='has 2 state'):
        layer(_random(2, 3, 5), initial_state=[_random(2, 4)])
    with pytest.raises(ValueError, match=r'\(2, 4\)'):
        layer(_random(2, 3, 5), initial_state=[_random(2, 3), _random(2, 3)])
    with pytest.raises(ValueError, match='mask'):
        layer(_random(2, 3, 5), mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match='features'):
        GRU(3)(Input((4, None)))


def test_weights_are_c_ordered_as_loaded_ones_are():
    # Orthogonal's QR gives a transposed (F-ordered) matrix; BLAS sums in another
    # order for it, so a loaded copy (C order) would predict different low bits.
    layer = LSTM(64)
    layer.build((None, 5, 3))
    assert all(weight.data.flags['C_CONTIGUOUS'] for weight in layer.weights)
