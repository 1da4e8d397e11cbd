"""Inside a mixed layer's call: float16 activations from float32 master weights."""

import numpy as np
import pytest

import minidl
from minidl import Tensor, mixed_precision
from minidl.compute import vendor
from minidl.layers import LSTM, BatchNormalization, Conv2D, Dense, Flatten, Input
from minidl.layers import autocast
from minidl.models import Model, Sequential


def _rounded(array):
    """The float16 value of ``array``, held in float64 (the exact operand float16 math sees)."""
    return np.asarray(array, np.float16).astype(np.float64)


def test_a_dense_layer_computes_in_float16_from_float32_weights():
    minidl.set_seed(0)
    layer = Dense(5, dtype='mixed_float16', bias_initializer='glorot_uniform')
    x = np.random.default_rng(0).normal(size=(4, 7)).astype(np.float32)
    y = layer(x)
    kernel, bias = layer.get_weights()
    assert y.dtype == np.float16 and kernel.dtype == bias.dtype == np.float32
    # The operands rounded to float16, the product accumulated exactly and rounded once:
    # float16's accumulation in float32 leaves at most one float16 ulp between them.
    truth = _rounded(x) @ _rounded(kernel) + _rounded(bias)
    np.testing.assert_allclose(y.numpy().astype(np.float64), truth, rtol=2 ** -10, atol=2 ** -14)


def test_master_weights_get_float32_gradients_of_the_float16_computation():
    minidl.set_seed(0)
    layer = Dense(3, dtype='mixed_float16')
    x = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    y = layer(Tensor(x))
    y.astype('float32').sum().backward()
    grad = layer.kernel.grad
    assert grad.dtype == np.float32 and layer.kernel.dtype == np.float32
    # d(sum(x @ W))/dW = x^T 1, from the float16 copy of x.
    truth = _rounded(x).T @ np.ones((6, 3))
    np.testing.assert_allclose(grad.numpy(), truth, rtol=2 ** -10, atol=2 ** -14)


def test_activations_are_float16_the_model_output_float32():
    mixed_precision.set_global_policy('mixed_float16')
    minidl.set_seed(0)
    inputs = Input((6, 6, 1))
    hidden = Conv2D(3, 3, activation='relu')(inputs)
    normed = BatchNormalization()(hidden)
    outputs = Dense(2, activation='softmax')(Flatten()(normed))
    model = Model(inputs, outputs)
    x = np.random.default_rng(2).random((3, 6, 6, 1)).astype(np.float32)
    value, dtypes = Tensor(x), []
    for layer in model.layers[1:]:  # the graph's layers one by one
        value = layer(value)
        dtypes.append(str(value.dtype))
    assert dtypes == ['float16'] * 4
    assert model.predict(x).dtype == np.float32
    assert all(w.dtype == np.float32 for w in model.weights)


def test_a_model_of_mixed_layers_outputs_float32_without_a_global_policy():
    # The model itself is float32 (made, or loaded, without the policy): its loss must
    # still see float32, or the scaled loss alone would overflow float16.
    model = Sequential([Dense(3, input_shape=(2,), dtype='mixed_float16')])
    assert not model.dtype_policy.is_mixed
    x = np.ones((2, 2), np.float32)
    assert model.layers[0](x).dtype == np.float16 and model(x).dtype == np.float32


def test_batch_normalization_computes_in_float32_and_returns_float16():
    x = np.random.default_rng(3).normal(size=(8, 4)).astype(np.float16)
    mixed = BatchNormalization(dtype='mixed_float16')
    plain = BatchNormalization()
    out = mixed(x, training=True)
    reference = plain(x.astype(np.float32), training=True)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.numpy(), reference.numpy().astype(np.float16))
    np.testing.assert_array_equal(mixed.get_weights()[2], plain.get_weights()[2])  # moving mean


def test_a_float32_layer_inside_a_mixed_model_gets_float32_inputs():
    mixed_precision.set_global_policy('mixed_float16')
    minidl.set_seed(0)
    last = Dense(2, dtype='float32')
    model = Sequential([Dense(4, input_shape=(3,)), last])
    x = np.ones((2, 3), np.float32)
    hidden = model.layers[0](x)
    assert hidden.dtype == np.float16 and last(hidden).dtype == np.float32
    assert not any(getattr(w, 'autocast', False) for w in last.weights)
    np.testing.assert_array_equal(model.predict(x), last(hidden).numpy())


def test_each_weight_is_cast_once_per_call_even_read_at_every_step(monkeypatch):
    layer = LSTM(4, dtype='mixed_float16')
    x = np.random.default_rng(4).normal(size=(2, 9, 3)).astype(np.float32)
    layer(x)  # built
    casts = []
    original = autocast._cast
    monkeypatch.setattr(autocast, '_cast', lambda t, d: casts.append(t) or original(t, d))
    y = layer(x)
    assert y.dtype == np.float16
    # The input once, and each of kernel, recurrent kernel and bias once, not 9 times.
    assert len(casts) == 4 and sum(t is w for t in casts for w in layer.weights) == 3


def test_no_cast_outside_a_mixed_call():
    layer = Dense(2)
    x = Tensor(np.ones((1, 3), np.float32))
    assert layer(x).dtype == np.float32 and not autocast.active()
    mixed = Dense(2, dtype='mixed_float16')
    mixed(x)
    assert not autocast.active()  # the scope ends with the call
    # A flagged weight used outside its layer's call is read as it is.
    assert (x @ mixed.kernel).dtype == np.float32


def test_float16_inputs_skip_onednn_and_take_the_reference_code(monkeypatch):
    if vendor.kernels(np) is None:
        pytest.skip('oneDNN is not installed here')
    args = dict(strides=(1, 1), pads=((0, 0), (0, 0)), dilations=(1, 1), channels_first=False)
    assert vendor.kernel(np, 'conv2d', np.dtype('float32'), **args) is not None
    assert vendor.kernel(np, 'conv2d', np.dtype('float16'), **args) is None
    minidl.set_seed(0)
    layer = Conv2D(3, 3, dtype='mixed_float16')
    x = np.random.default_rng(5).random((2, 6, 6, 2)).astype(np.float32)
    with_onednn = layer(x).numpy()
    monkeypatch.setattr(minidl.config, 'use_onednn', 'never')
    np.testing.assert_array_equal(layer(x).numpy(), with_onednn)
