"""RNN(cell) and the cells against PyTorch, the fused layers and numpy loops following K.rnn."""

import numpy as np
import pytest

from minidl import functions as F
from minidl.compute import Generator, set_seed
from minidl.gradcheck import gradcheck
from minidl.layers import (
    GRU, LSTM, RNN, Dense, GRUCell, Input, Layer, LSTMCell, SimpleRNN, SimpleRNNCell,
    StackedRNNCells)
from minidl.models import Sequential
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(w.dtype)
                       for w in layer.get_weights()])


# ----- numpy references --------------------------------------------------------

def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _hard_sigmoid(z):
    return np.clip(0.2 * z + 0.5, 0, 1)


def _lstm_step(weights, gate=_sigmoid, input_mask=1, recurrent_mask=1):
    kernel, recurrent_kernel, bias = weights
    u = recurrent_kernel.shape[0]

    def step(x, states):
        h, c = states
        z = (x * input_mask) @ kernel + bias + (h * recurrent_mask) @ recurrent_kernel
        i, f, g, o = gate(z[:, :u]), gate(z[:, u:2 * u]), np.tanh(z[:, 2 * u:3 * u]), \
            gate(z[:, 3 * u:])
        c = f * c + i * g
        h = o * np.tanh(c)
        return h, [h, c]
    return step


def _gru_step(weights, reset_after, input_mask=1, recurrent_mask=1):
    kernel, recurrent_kernel, bias = weights
    u = recurrent_kernel.shape[0]
    input_bias, recurrent_bias = (bias[0], bias[1]) if reset_after else (bias, np.zeros_like(bias))

    def step(x, states):
        h = states[0]
        xz = (x * input_mask) @ kernel + input_bias
        hr = h * recurrent_mask
        inner = hr @ recurrent_kernel + recurrent_bias
        z = _sigmoid(xz[:, :u] + inner[:, :u])
        r = _sigmoid(xz[:, u:2 * u] + inner[:, u:2 * u])
        if reset_after:
            recurrent_h = r * inner[:, 2 * u:]
        else:
            recurrent_h = (r * hr) @ recurrent_kernel[:, 2 * u:]
        candidate = np.tanh(xz[:, 2 * u:] + recurrent_h)
        h = z * h + (1 - z) * candidate  # the undropped state
        return h, [h]
    return step


def _k_rnn(step, x, states, mask=None, go_backwards=False):
    """Keras 2's K.rnn (its default, non-unrolled path): the outputs in processing order."""
    if go_backwards:
        x = x[:, ::-1]
        mask = None if mask is None else mask[:, ::-1]
    outputs = []
    for t in range(x.shape[1]):
        output, new_states = step(x[:, t], states)
        if mask is not None:
            m = mask[:, t:t + 1]
            output = np.where(m, output, states[0])
            new_states = [np.where(m, new, old) for new, old in zip(new_states, states)]
        outputs.append(output)
        states = new_states
    return np.stack(outputs, axis=1), states


# ----- cells against PyTorch ------------------------------------------------------

def _keras_gru_to_torch(array, units):
    z, r, h = (array[..., i * units:(i + 1) * units] for i in range(3))
    return np.ascontiguousarray(np.concatenate([r, z, h], axis=-1))


@pytest.mark.parametrize('kind', ['lstm', 'gru', 'simple'])
def test_cell_step_matches_torch_forward_and_gradients(torch, kind):
    batch, features, units = 3, 4, 5
    cell = {'lstm': LSTMCell(units), 'gru': GRUCell(units, reset_after=True),
            'simple': SimpleRNNCell(units)}[kind]
    cell.build((batch, features))
    _randomize(cell)
    kernel, recurrent_kernel, bias = cell.get_weights()
    module = {'lstm': torch.nn.LSTMCell, 'gru': torch.nn.GRUCell,
              'simple': torch.nn.RNNCell}[kind](features, units)
    input_bias, recurrent_bias = bias, np.zeros_like(bias)
    if kind == 'gru':
        kernel, recurrent_kernel = (_keras_gru_to_torch(kernel, units),
                                    _keras_gru_to_torch(recurrent_kernel, units))
        input_bias, recurrent_bias = _keras_gru_to_torch(bias, units)
    with torch.no_grad():
        module.weight_ih.copy_(torch.tensor(kernel.T.copy()))
        module.weight_hh.copy_(torch.tensor(recurrent_kernel.T.copy()))
        module.bias_ih.copy_(torch.tensor(input_bias))
        module.bias_hh.copy_(torch.tensor(recurrent_bias))
    x, h, c = _random(batch, features, seed=2), _random(batch, units, seed=3), \
        _random(batch, units, seed=4)
    states = [Tensor(h, requires_grad=True)] + ([Tensor(c, requires_grad=True)]
                                                  if kind == 'lstm' else [])
    inputs = Tensor(x, requires_grad=True)
    output, new_states = cell.call(inputs, states)
    assert len(new_states) == len(states)
    loss = (output * output).sum() + (new_states[-1] * 3).sum()
    loss.backward()

    torch_x = torch.tensor(x, requires_grad=True)
    torch_states = [torch.tensor(h, requires_grad=True)] + (
        [torch.tensor(c, requires_grad=True)] if kind == 'lstm' else [])
    if kind == 'lstm':
        torch_h, torch_c = module(torch_x, tuple(torch_states))
        torch_new = [torch_h, torch_c]
    else:
        torch_h = module(torch_x, torch_states[0])
        torch_new = [torch_h]
    ((torch_h * torch_h).sum() + (torch_new[-1] * 3).sum()).backward()
    np.testing.assert_allclose(output.numpy(), torch_h.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(inputs.grad, torch_x.grad.numpy(), atol=1e-5)
    for ours, theirs in zip(states, torch_states):
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), atol=1e-5)
    kernel_grad = cell.kernel.grad
    if kind == 'gru':
        kernel_grad = _keras_gru_to_torch(kernel_grad, units)
    np.testing.assert_allclose(kernel_grad, module.weight_ih.grad.numpy().T, atol=1e-5)


# ----- RNN(cell) against the fused layers -------------------------------------------

@pytest.mark.parametrize('fused, cell, go_backwards', [
    (LSTM(4, return_sequences=True), LSTMCell(4), False),
    (LSTM(4, return_sequences=True, go_backwards=True), LSTMCell(4), True),
    (GRU(4, return_sequences=True), GRUCell(4), False),
    (GRU(4, return_sequences=True, reset_after=True), GRUCell(4, reset_after=True), False),
    (SimpleRNN(4, return_sequences=True, go_backwards=True), SimpleRNNCell(4), True),
])
def test_rnn_of_a_cell_equals_the_fused_layer(fused, cell, go_backwards):
    x = _random(3, 6, 5)
    layer = RNN(cell, return_sequences=True, go_backwards=go_backwards)
    fused(x)
    layer(x)
    _randomize(fused)
    layer.set_weights(fused.get_weights())
    np.testing.assert_allclose(layer(x).numpy(), fused(x).numpy(), atol=2e-6)


def test_parameter_counts_and_weight_names_are_keras_2s():
    features, units = 7, 5
    cases = [(LSTMCell(units), 4 * (units * (features + units) + units)),
             (GRUCell(units), 3 * (units * (features + units) + units)),
             (GRUCell(units, reset_after=True), 3 * (units * (features + units) + 2 * units)),
             (SimpleRNNCell(units), units * (features + units) + units)]
    for cell, count in cases:
        layer = RNN(cell, name='rnn_named')
        layer(np.zeros((2, 3, features), np.float32))
        assert layer.count_params() == count
        assert [w.name for w in layer.weights] == [
            'rnn_named/kernel:0', 'rnn_named/recurrent_kernel:0', 'rnn_named/bias:0']


def test_lstm_cell_unit_forget_bias_starts_the_forget_gate_at_one():
    cell = LSTMCell(3)
    cell.build((1, 2))
    np.testing.assert_array_equal(cell.get_weights()[2], [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])


def test_hard_sigmoid_recurrent_activation_matches_numpy():
    x = _random(2, 5, 3)
    layer = RNN(LSTMCell(4, recurrent_activation='hard_sigmoid'), return_sequences=True)
    layer(x)
    _randomize(layer)
    expected, _ = _k_rnn(_lstm_step(layer.get_weights(), gate=_hard_sigmoid), x.astype(float),
                         [np.zeros((2, 4))] * 2)
    np.testing.assert_allclose(layer(x).numpy(), expected, atol=1e-6)


# ----- masks ----------------------------------------------------------------------

@pytest.mark.parametrize('go_backwards', [False, True])
def test_masked_steps_follow_k_rnn(go_backwards):
    x = _random(3, 6, 2)
    mask = np.array([[1, 1, 1, 1, 0, 0],    # post-padding
                     [0, 0, 1, 1, 1, 1],    # pre-padding
                     [1, 0, 1, 1, 0, 1]], bool)
    h0, c0 = _random(3, 4, seed=5), _random(3, 4, seed=6)
    layer = RNN(LSTMCell(4), return_sequences=True, return_state=True,
                go_backwards=go_backwards)
    layer(x)
    _randomize(layer)
    outputs, h, c = layer(x, mask=mask, initial_state=[h0, c0])
    expected, (expected_h, expected_c) = _k_rnn(
        _lstm_step(layer.get_weights()), x.astype(float), [h0, c0], mask, go_backwards)
    np.testing.assert_allclose(outputs.numpy(), expected, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), expected_h, atol=1e-6)
    np.testing.assert_allclose(c.numpy(), expected_c, atol=1e-6)
    last = RNN(layer.cell, go_backwards=go_backwards)(x, mask=mask, initial_state=[h0, c0])
    np.testing.assert_allclose(last.numpy(), expected[:, -1], atol=1e-6)


def test_compute_mask_passes_the_mask_with_sequences_only():
    mask = np.ones((2, 3), bool)
    assert RNN(LSTMCell(2)).compute_mask(None, mask) is None
    assert RNN(LSTMCell(2), return_sequences=True).compute_mask(None, mask) is mask
    assert RNN(LSTMCell(2), return_sequences=True, return_state=True).compute_mask(
        None, [mask]) == [mask, None, None]


def test_gradcheck_of_a_masked_lstm_rnn_in_float64():
    x = _random(2, 4, 3, dtype=np.float64)
    mask = np.array([[1, 1, 0, 1], [0, 1, 1, 1]], bool)
    layer = RNN(LSTMCell(2, dtype='float64'), return_sequences=True, dtype='float64')
    layer(x)
    _randomize(layer)
    cell = layer.cell

    def run(inputs, kernel, recurrent_kernel, bias, h0):
        cell.kernel, cell.recurrent_kernel, cell.bias = kernel, recurrent_kernel, bias
        return layer.call(inputs, mask=mask, initial_state=[h0, h0 * 0.5])

    assert gradcheck(run, [x] + layer.get_weights() + [_random(2, 2, seed=9, dtype=np.float64)])


# ----- stateful -------------------------------------------------------------------

def test_stateful_halves_equal_the_whole_and_reset_states():
    x = _random(2, 6, 3)
    whole = RNN(LSTMCell(4), return_sequences=True, return_state=True)
    whole(x)
    _randomize(whole)
    layer = RNN(LSTMCell(4), return_sequences=True, return_state=True, stateful=True)
    layer(x[:, :3])
    layer.reset_states()
    layer.set_weights(whole.get_weights())
    expected = [t.numpy() for t in whole(x)]
    first, second = layer(x[:, :3]), layer(x[:, 3:])
    np.testing.assert_allclose(np.concatenate([first[0].numpy(), second[0].numpy()], axis=1),
                               expected[0], atol=1e-6)
    for ours, theirs in zip(second[1:], expected[1:]):
        np.testing.assert_allclose(ours.numpy(), theirs, atol=1e-6)
    assert len(layer.weights) == 3  # the states are not weights
    layer.reset_states()
    np.testing.assert_array_equal(layer(x[:, :3])[0].numpy(), first[0].numpy())
    h, c = _random(2, 4, seed=7), _random(2, 4, seed=8)
    layer.reset_states([h, c])
    _, expected_states = _k_rnn(_lstm_step(layer.get_weights()), x[:, :3].astype(float), [h, c])
    np.testing.assert_allclose(layer(x[:, :3])[1].numpy(), expected_states[0], atol=1e-6)
    with pytest.raises(ValueError, match='state 1 must have shape'):
        layer.reset_states([h, c[:1]])
    with pytest.raises(ValueError, match='batch size 2'):
        layer(x[:1])
    with pytest.raises(AttributeError, match='not stateful'):
        whole.reset_states()


def test_stateful_needs_a_fixed_batch_size():
    with pytest.raises(ValueError, match='fixed batch size'):
        RNN(LSTMCell(2), stateful=True)(Input((5, 3)))
    output = RNN(LSTMCell(2), stateful=True)(Input(batch_shape=(4, 5, 3)))
    assert output.shape == (4, 2)


# ----- dropout --------------------------------------------------------------------

@pytest.mark.parametrize('cell_class', [LSTMCell, GRUCell])
def test_dropout_masks_are_fixed_over_time_and_repeat_under_a_seed(cell_class):
    x = _random(4, 5, 6)
    results = []
    for _ in range(2):
        set_seed(3)
        layer = RNN(cell_class(8, dropout=0.3, recurrent_dropout=0.4), return_sequences=True)
        layer(x)
        _randomize(layer)
        results.append(layer(x, training=True).numpy())
    np.testing.assert_array_equal(results[0], results[1])
    cell = layer.cell
    input_mask, recurrent_mask = cell.dropout_masks((4, 6), True)
    assert input_mask.shape == (4, 6) and recurrent_mask.shape == (4, 8)
    assert set(np.unique(input_mask)) <= {0, np.float32(1 / 0.7)}
    assert set(np.unique(recurrent_mask)) <= {0, np.float32(1 / 0.6)}
    assert 0 < (recurrent_mask == 0).sum() < recurrent_mask.size
    weights = [w.astype(float) for w in layer.get_weights()]
    step = _lstm_step(weights, input_mask=input_mask, recurrent_mask=recurrent_mask) \
        if cell_class is LSTMCell else \
        _gru_step(weights, False, input_mask=input_mask, recurrent_mask=recurrent_mask)
    states = [np.zeros((4, 8))] * len(np.atleast_1d(cell.state_size))
    expected, _ = _k_rnn(step, x.astype(float), states)
    np.testing.assert_allclose(results[1], expected, atol=1e-5)
    # At inference nothing is dropped.
    plain = _lstm_step(weights) if cell_class is LSTMCell else _gru_step(weights, False)
    np.testing.assert_allclose(layer(x).numpy(), _k_rnn(plain, x.astype(float), states)[0],
                               atol=1e-5)
    assert cell.dropout_masks((4, 6), False) == (None, None)


def test_each_sequence_draws_new_masks():
    cell = SimpleRNNCell(3, recurrent_dropout=0.5)
    cell.generator = Generator(0)
    layer = RNN(cell)
    x = _random(4, 2, 2)
    layer(x, training=True)
    first = cell.dropout_masks((4, 2), True)[1].copy()
    layer(x, training=True)
    assert not np.array_equal(first, cell.dropout_masks((4, 2), True)[1])


# ----- stacks and user cells ----------------------------------------------------------

def test_stacked_cells_equal_two_stacked_layers():
    x = _random(2, 5, 3)
    stacked = RNN([LSTMCell(4), GRUCell(3)], return_sequences=True, return_state=True)
    first = RNN(LSTMCell(4), return_sequences=True, return_state=True)
    second = RNN(GRUCell(3), return_sequences=True, return_state=True)
    stacked(x)
    _randomize(stacked)
    assert stacked.cell.state_size == [4, 4, 3] and stacked.cell.output_size == 3
    weights = stacked.get_weights()
    first(x)
    first.set_weights(weights[:3])
    sequence, h1, c1 = first(x)
    second(sequence)
    second.set_weights(weights[3:])
    expected, h2 = second(sequence)
    outputs, *states = stacked(x)
    np.testing.assert_allclose(outputs.numpy(), expected.numpy(), atol=1e-6)
    for ours, theirs in zip(states, [h1, c1, h2]):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)
    rebuilt = RNN.from_config(stacked.get_config())
    assert isinstance(rebuilt.cell, StackedRNNCells)
    assert [type(c) for c in rebuilt.cell.cells] == [LSTMCell, GRUCell]


class MinimalRNNCell(Layer):
    """The smallest cell: ``h_t = tanh(x_t W + h_{t-1} U)``."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight('kernel', (input_shape[-1], self.units))
        self.recurrent_kernel = self.add_weight('recurrent_kernel', (self.units, self.units),
                                                initializer='orthogonal')
        self.built = True

    def call(self, inputs, states):
        output = F.tanh(F.matmul(inputs, self.kernel) +
                        F.matmul(states[0], self.recurrent_kernel))
        return output, [output]

    def get_config(self):
        return {**super().get_config(), 'units': self.units}


def test_a_user_cell_works_in_a_sequential_model_and_fits():
    set_seed(0)
    x = _random(32, 5, 3)
    y = x.sum(axis=(1, 2))[:, None] / 5
    model = Sequential([RNN(MinimalRNNCell(8), input_shape=(5, 3)), Dense(1)])
    model.compile('adam', 'mse')
    assert model.count_params() == 3 * 8 + 8 * 8 + 8 + 1
    history = model.fit(x, y, epochs=15, batch_size=8, verbose=0)
    assert history.history['loss'][-1] < 0.5 * history.history['loss'][0]
    layer = model.layers[0]
    rebuilt = RNN.from_config(layer.get_config(), custom_objects={'MinimalRNNCell': MinimalRNNCell})
    rebuilt(x[:2])
    rebuilt.set_weights(layer.get_weights())
    np.testing.assert_array_equal(rebuilt(x[:2]).numpy(), layer(x[:2]).numpy())


def test_bad_cells_and_states_are_refused():
    with pytest.raises(ValueError, match='state_size'):
        RNN(Dense(3))
    layer = RNN(LSTMCell(2))
    with pytest.raises(ValueError, match='2 state'):
        layer(_random(1, 3, 2), initial_state=[np.zeros((1, 2), np.float32)])
    with pytest.raises(ValueError, match='initial state 1 must have shape'):
        layer(_random(1, 3, 2), initial_state=[np.zeros((1, 2), np.float32),
                                                np.zeros((1, 3), np.float32)])


def test_initial_states_in_the_inputs_list_and_time_major():
    x, h0 = _random(2, 4, 3), _random(2, 5, seed=1)
    layer = RNN(GRUCell(5), return_sequences=True)
    expected = layer(x, initial_state=[h0]).numpy()
    np.testing.assert_array_equal(layer([x, h0]).numpy(), expected)
    major = RNN(layer.cell, return_sequences=True, time_major=True)
    np.testing.assert_allclose(major(x.transpose(1, 0, 2), initial_state=[h0]).numpy(),
                               expected.transpose(1, 0, 2), atol=1e-6)
