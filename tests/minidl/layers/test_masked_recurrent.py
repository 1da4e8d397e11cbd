"""Masked recurrent layers equal PyTorch's packed sequences; padding never changes a sample."""

import numpy as np
import pytest

from minidl import layers
from minidl.layers import GRU, LSTM, Bidirectional, Input, Masking
from minidl.models import Model
from minidl.tensor import Tensor

torch = pytest.importorskip('torch')

LENGTHS = [5, 2, 4]
STEPS, FEATURES, UNITS = 6, 3, 4


def _padded(pre=False, seed=0):
    """Sequences of LENGTHS, padded with zero steps at the end (or the front)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((len(LENGTHS), STEPS, FEATURES), 'float32')
    for row, length in enumerate(LENGTHS):
        values = rng.uniform(0.5, 1.5, (length, FEATURES)) * rng.choice([-1, 1], (length, 1))
        if pre:
            x[row, STEPS - length:] = values
        else:
            x[row, :length] = values
    return x


def _model(cls):
    options = {'reset_after': True} if cls is GRU else {}
    inputs = Input((STEPS, FEATURES))
    outputs = Bidirectional(cls(UNITS, return_sequences=True, **options))(
        Masking(0.0)(inputs))
    model = Model(inputs, outputs)
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype('float32')
                       for w in model.get_weights()])
    return model


def _torch_gate_order(array, cls):
    """Keras's gate blocks (LSTM i, f, c, o; GRU z, r, h) as PyTorch's (i, f, g, o; r, z, n)."""
    if cls is LSTM:
        return array
    u = UNITS
    return np.concatenate([array[..., u:2 * u], array[..., :u], array[..., 2 * u:]], axis=-1)


def _torch_twin(model, cls):
    recurrent = (torch.nn.LSTM if cls is LSTM else torch.nn.GRU)(
        FEATURES, UNITS, batch_first=True, bidirectional=True, dtype=torch.float64)
    weights = model.get_weights()
    with torch.no_grad():
        for direction, suffix in enumerate(['', '_reverse']):
            kernel, recurrent_kernel, bias = weights[3 * direction:3 * direction + 3]
            getattr(recurrent, 'weight_ih_l0' + suffix).copy_(
                torch.tensor(_torch_gate_order(kernel, cls).T))
            getattr(recurrent, 'weight_hh_l0' + suffix).copy_(
                torch.tensor(_torch_gate_order(recurrent_kernel, cls).T))
            rows = (bias, np.zeros_like(bias)) if cls is LSTM else (bias[0], bias[1])
            getattr(recurrent, 'bias_ih_l0' + suffix).copy_(
                torch.tensor(_torch_gate_order(rows[0], cls)))
            getattr(recurrent, 'bias_hh_l0' + suffix).copy_(
                torch.tensor(_torch_gate_order(rows[1], cls)))
    return recurrent


def _valid_rows(array, pre):
    """The outputs of the valid steps, sample after sample."""
    return np.concatenate([array[row, STEPS - n:] if pre else array[row, :n]
                           for row, n in enumerate(LENGTHS)])


def _minidl_run(model, x, pre, probe):
    output = model(Tensor(x))
    valid = np.zeros(output.shape, 'float32')
    for row, n in enumerate(LENGTHS):
        if pre:
            valid[row, STEPS - n:] = probe[row, :n]
        else:
            valid[row, :n] = probe[row, :n]
    (output * Tensor(valid)).sum().backward()
    return output.numpy(), [w.grad.numpy().copy() for w in model.trainable_weights]


@pytest.mark.parametrize('cls', [LSTM, GRU])
@pytest.mark.parametrize('pre', [False, True], ids=['post-padding', 'pre-padding'])
def test_masked_bidirectional_layers_equal_torch_packed_sequences(cls, pre):
    model = _model(cls)
    probe = np.random.default_rng(9).normal(size=(len(LENGTHS), STEPS, 2 * UNITS))
    output, grads = _minidl_run(model, _padded(pre), pre, probe.astype('float32'))

    twin = _torch_twin(model, cls)
    packed = torch.nn.utils.rnn.pack_padded_sequence(
        torch.tensor(_padded(pre=False), dtype=torch.float64), LENGTHS, batch_first=True,
        enforce_sorted=False)
    expected, _ = torch.nn.utils.rnn.pad_packed_sequence(twin(packed)[0], batch_first=True,
                                                         total_length=STEPS)
    (expected * torch.tensor(probe)).sum().backward()
    np.testing.assert_allclose(_valid_rows(output, pre),
                               _valid_rows(expected.detach().numpy(), False), atol=2e-5)

    suffixes = ['', '_reverse']
    for direction in range(2):
        kernel, recurrent_kernel, bias = grads[3 * direction:3 * direction + 3]
        suffix = suffixes[direction]
        torch_kernel = getattr(twin, 'weight_ih_l0' + suffix).grad.numpy().T
        torch_recurrent = getattr(twin, 'weight_hh_l0' + suffix).grad.numpy().T
        np.testing.assert_allclose(_torch_gate_order(kernel, cls), torch_kernel, atol=1e-4)
        np.testing.assert_allclose(_torch_gate_order(recurrent_kernel, cls), torch_recurrent,
                                   atol=1e-4)
        torch_bias = getattr(twin, 'bias_ih_l0' + suffix).grad.numpy()
        input_bias = bias if cls is LSTM else bias[0]
        np.testing.assert_allclose(_torch_gate_order(input_bias, cls), torch_bias, atol=1e-4)


@pytest.mark.parametrize('cls', [LSTM, GRU, layers.SimpleRNN])
def test_more_padding_never_changes_a_samples_results(cls):
    inputs = Input((None, FEATURES))
    masked = Masking(0.0)(inputs)
    final = Bidirectional(cls(UNITS), merge_mode='sum')(masked)
    model = Model(inputs, final)
    x = _padded()
    longer = np.concatenate([x, np.zeros((len(LENGTHS), 3, FEATURES), 'float32')], axis=1)
    np.testing.assert_allclose(model.predict(x), model.predict(longer), atol=1e-6)
    alone = model.predict(x[1:2, :LENGTHS[1]])
    np.testing.assert_allclose(model.predict(x)[1:2], alone, atol=1e-6)


def test_masked_training_is_the_same_fused_and_step_by_step():
    """The fused LSTM and its cell run step by step (a non-fused activation with the
    same values) give the same masked results."""
    x = _padded(pre=True)
    fused = LSTM(UNITS, return_sequences=True)
    stepwise = LSTM(UNITS, return_sequences=True, activation=lambda t: layers.Activation(
        'tanh')(t))
    mask = np.any(x != 0, axis=-1)
    fused(x)
    stepwise(x)
    stepwise.set_weights(fused.get_weights())
    assert fused.fusable() and not stepwise.fusable()
    np.testing.assert_allclose(fused(x, mask=mask).numpy(), stepwise(x, mask=mask).numpy(),
                               atol=1e-6)
