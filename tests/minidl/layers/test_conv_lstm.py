"""ConvLSTM2D against a step loop written with PyTorch's conv2d (PyTorch has no
ConvLSTM), forward and gradients; Keras 2.2.4's weight shapes, parameter counts
and initial forget-gate bias; dropout masks predicted from the layer's generator."""

import json

import numpy as np
import pytest

from minidl import layers
from minidl.compute import Generator
from minidl.layers import Input
from minidl.models import Sequential
from minidl.tensor import Tensor


@pytest.fixture
def torch():
    return pytest.importorskip('torch')


def _random(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _torch_conv_lstm(torch, x, kernel, recurrent_kernel, bias, strides=1, padding='valid',
                     dilation=1, go_backwards=False, return_sequences=False,
                     input_masks=None, recurrent_masks=None):
    """The reference recurrence on channels-last ``x`` (batch, time, rows, cols, channels):
    Keras's gates i, f, c, o, hard-sigmoid gates, tanh, 'same' recurrent convolution."""
    conv = torch.nn.functional.conv2d

    def hard_sigmoid(z):
        return torch.clamp(0.2 * z + 0.5, 0.0, 1.0)

    def to_torch_kernel(k):
        return k.permute(3, 2, 0, 1)  # (kh, kw, in, out) -> (out, in, kh, kw)

    filters = recurrent_kernel.shape[2]
    kernels = torch.split(kernel, filters, dim=-1)
    recurrent_kernels = torch.split(recurrent_kernel, filters, dim=-1)
    biases = torch.split(bias, filters)
    steps = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    h = c = None
    outputs = []
    for t in steps:
        frame = x[:, t].permute(0, 3, 1, 2)
        gates = []
        for g in range(4):
            masked = frame if input_masks is None else frame * input_masks[g].permute(0, 3, 1, 2)
            gates.append(conv(masked, to_torch_kernel(kernels[g]), biases[g], stride=strides,
                              padding=0 if padding == 'valid' else 'same', dilation=dilation))
        if h is None:
            h = c = torch.zeros_like(gates[0])
        for g in range(4):
            state = h if recurrent_masks is None else h * recurrent_masks[g].permute(0, 3, 1, 2)
            gates[g] = gates[g] + conv(state, to_torch_kernel(recurrent_kernels[g]),
                                       padding='same')
        i, f, o = hard_sigmoid(gates[0]), hard_sigmoid(gates[1]), hard_sigmoid(gates[3])
        c = f * c + i * torch.tanh(gates[2])
        h = o * torch.tanh(c)
        outputs.append(h.permute(0, 2, 3, 1))
    return torch.stack(outputs, 1) if return_sequences else outputs[-1]


def _compare(torch, layer_kwargs, x, reference_kwargs=None, channels_first=False):
    layer = layers.ConvLSTM2D(dtype='float64', **layer_kwargs)
    x_ours = x.transpose(0, 1, 4, 2, 3) if channels_first else x
    x_tensor = Tensor(x_ours, requires_grad=True, dtype='float64')
    y = layer(x_tensor)
    # Random weights, so that every gate works in its non-saturated range.
    weights = [_random(*w.shape, seed=5 + n, scale=0.3) for n, w in enumerate(layer.weights)]
    layer.set_weights(weights)
    y = layer(x_tensor)
    upstream = _random(*y.shape, seed=9)
    (y * Tensor(upstream, dtype='float64')).sum().backward()

    x_torch = torch.tensor(x, requires_grad=True)
    weights_torch = [torch.tensor(w, requires_grad=True) for w in weights]
    expected = _torch_conv_lstm(torch, x_torch, *weights_torch, **(reference_kwargs or {}))
    if channels_first:
        expected = expected.permute(*((0, 1, 4, 2, 3) if expected.ndim == 5 else (0, 3, 1, 2)))
    (expected * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    x_grad = x_torch.grad.numpy()
    np.testing.assert_allclose(x_tensor.grad.numpy(),
                               x_grad.transpose(0, 1, 4, 2, 3) if channels_first else x_grad,
                               rtol=1e-9, atol=1e-12)
    for ours, theirs in zip(layer.weights, weights_torch):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9,
                                   atol=1e-12)


def test_sequences_match_pytorch(torch):
    _compare(torch, {'filters': 3, 'kernel_size': 3, 'return_sequences': True},
             _random(2, 4, 6, 5, 2), {'return_sequences': True})


@pytest.mark.filterwarnings('ignore:Using padding=.same. with even kernel')
def test_backwards_same_padding_last_output_matches_pytorch(torch):
    _compare(torch, {'filters': 2, 'kernel_size': (3, 2), 'padding': 'same',
                     'go_backwards': True},
             _random(2, 3, 5, 4, 3), {'padding': 'same', 'go_backwards': True})


def test_backwards_sequences_are_in_processing_order(torch):
    _compare(torch, {'filters': 2, 'kernel_size': 3, 'padding': 'same', 'go_backwards': True,
                     'return_sequences': True},
             _random(1, 3, 4, 4, 1), {'padding': 'same', 'go_backwards': True,
                                      'return_sequences': True})


def test_channels_first_strides_match_pytorch(torch):
    _compare(torch, {'filters': 2, 'kernel_size': 3, 'strides': 2,
                     'data_format': 'channels_first', 'return_sequences': True},
             _random(2, 3, 7, 7, 2), {'strides': 2, 'return_sequences': True},
             channels_first=True)


def test_dilation_matches_pytorch(torch):
    _compare(torch, {'filters': 2, 'kernel_size': 2, 'dilation_rate': 2},
             _random(1, 3, 6, 6, 2), {'dilation': 2})


def test_dropout_masks_are_per_gate_and_fixed_over_time(torch):
    rate, recurrent_rate = 0.3, 0.4
    x = _random(2, 3, 5, 5, 2)
    layer = layers.ConvLSTM2D(2, 3, padding='same', dropout=rate,
                              recurrent_dropout=recurrent_rate, return_sequences=True,
                              dtype='float64')
    layer(x)
    twin = Generator()
    twin.set_state(layer.generator.get_state())
    # Keras 2.2.4 draws four input masks, then four recurrent ones.
    input_masks = [twin.bernoulli((2, 5, 5, 2), 1 - rate) * (1 / (1 - rate))
                   for _ in range(4)]
    recurrent_masks = [twin.bernoulli((2, 5, 5, 2), 1 - recurrent_rate)
                       * (1 / (1 - recurrent_rate)) for _ in range(4)]
    y = layer(Tensor(x, dtype='float64'), training=True).numpy()
    expected = _torch_conv_lstm(
        torch, torch.tensor(x), *(torch.tensor(w) for w in layer.get_weights()),
        padding='same', return_sequences=True,
        input_masks=[torch.tensor(m) for m in input_masks],
        recurrent_masks=[torch.tensor(m) for m in recurrent_masks])
    np.testing.assert_allclose(y, expected.numpy(), rtol=1e-9, atol=1e-12)
    # Inference uses neither mask.
    plain = _torch_conv_lstm(torch, torch.tensor(x),
                             *(torch.tensor(w) for w in layer.get_weights()),
                             padding='same', return_sequences=True)
    np.testing.assert_allclose(layer(Tensor(x, dtype='float64')).numpy(), plain.numpy(),
                               rtol=1e-9, atol=1e-12)


def test_weights_and_parameter_count_are_keras():
    # Keras 2.2.4 examples/conv_lstm.py's first layer.
    layer = layers.ConvLSTM2D(filters=40, kernel_size=(3, 3), padding='same',
                              return_sequences=True, name='cl')
    output = layer(Input((None, 40, 40, 1)))
    assert output.shape == (None, None, 40, 40, 40)
    assert layer.count_params() == 4 * 40 * (9 * 1 + 9 * 40) + 4 * 40 == 59200
    assert [w.name for w in layer.weights] == ['cl/kernel:0', 'cl/recurrent_kernel:0',
                                               'cl/bias:0']
    kernel, recurrent_kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 1, 160) and recurrent_kernel.shape == (3, 3, 40, 160)
    np.testing.assert_array_equal(bias, np.repeat([0.0, 1.0, 0.0, 0.0], 40))
    layer = layers.ConvLSTM2D(5, (2, 3), strides=2, use_bias=False, unit_forget_bias=False,
                              data_format='channels_first')
    assert layer(Input((4, 3, 9, 9))).shape == (None, 5, 4, 4)
    assert layer.count_params() == 4 * 5 * (6 * 3 + 6 * 5)


def test_return_state_gives_the_final_states():
    layer = layers.ConvLSTM2D(2, 3, return_state=True, return_sequences=True)
    output, h, c = layer(_random(2, 3, 5, 5, 1).astype('float32'))
    assert output.shape == (2, 3, 3, 3, 2) and h.shape == c.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(output.numpy()[:, -1], h.numpy())


def test_bad_arguments_are_refused_clearly():
    with pytest.raises(NotImplementedError, match='stateful'):
        layers.ConvLSTM2D(2, 3, stateful=True)
    with pytest.raises(ValueError, match='recurrent_dropout'):
        layers.ConvLSTM2D(2, 3, recurrent_dropout=1.0)
    with pytest.raises(ValueError, match='filters'):
        layers.ConvLSTM2D(0, 3)
    with pytest.raises(ValueError, match='ndim=5'):
        layers.ConvLSTM2D(2, 3)(np.zeros((2, 3, 5, 5), 'float32'))


def test_config_round_trips_through_json():
    layer = layers.ConvLSTM2D(3, (3, 1), padding='same', dropout=0.1, go_backwards=True)
    config = json.loads(json.dumps(layer.get_config()))
    config.pop('name')
    clone = json.loads(json.dumps(layers.ConvLSTM2D.from_config(config).get_config()))
    assert {k: v for k, v in clone.items() if k != 'name'} == config


def test_a_small_conv_lstm_model_trains():
    # The shape of Keras 2.2.4's examples/conv_lstm.py, small: frames in, next frames out.
    frames = (Generator(0).uniform((4, 3, 8, 8, 1)) > 0.7).astype('float32')
    model = Sequential([
        layers.ConvLSTM2D(4, (3, 3), padding='same', return_sequences=True,
                          input_shape=(None, 8, 8, 1)),
        layers.BatchNormalization(),
        layers.TimeDistributed(layers.Conv2D(1, (3, 3), padding='same',
                                             activation='sigmoid')),
    ])
    model.compile(loss='binary_crossentropy', optimizer='adam')
    first = model.train_on_batch(frames[:, :-1], frames[:, 1:])
    for _ in range(5):
        last = model.train_on_batch(frames[:, :-1], frames[:, 1:])
    assert np.isfinite(first) and last < first
    assert model.predict(frames).shape == (4, 3, 8, 8, 1)
