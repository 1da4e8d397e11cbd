"""Activations: values and gradients against PyTorch or Keras's formulas, the logits contract,
and the name registry."""

import numpy as np
import pytest

from minidl import Tensor, activations
from minidl.gradcheck import gradcheck

torch = pytest.importorskip('torch')

X = np.random.default_rng(0).normal(0, 2, size=(4, 6))
X[0, :3] = [0.3, 3.0, -0.5]  # values near the thresholds used below, but not on them


def torch_result(function):
    x = torch.tensor(X, requires_grad=True)
    y = function(x)
    y.backward(torch.tensor(np.cos(X)))
    return y.detach().numpy(), x.grad.numpy()


def minidl_result(function):
    x = Tensor(X, dtype='float64', requires_grad=True)
    y = function(x)
    y.backward(np.cos(X))
    return y.numpy(), x.grad.numpy()


@pytest.mark.parametrize('name, reference', [
    ('relu', torch.relu),
    ('sigmoid', torch.sigmoid),
    ('tanh', torch.tanh),
    ('elu', torch.nn.functional.elu),
    ('selu', torch.selu),
    ('softplus', torch.nn.functional.softplus),
    ('softsign', torch.nn.functional.softsign),
    ('exponential', torch.exp),
    ('swish', torch.nn.functional.silu),
    ('silu', torch.nn.functional.silu),
    ('mish', torch.nn.functional.mish),
    ('gelu', torch.nn.functional.gelu),
    ('relu6', torch.nn.functional.relu6),
    ('leaky_relu', lambda x: torch.nn.functional.leaky_relu(x, 0.2)),
    ('softmax', lambda x: torch.softmax(x, -1)),
    ('log_softmax', lambda x: torch.log_softmax(x, -1)),
    ('linear', lambda x: x * 1),
])
def test_named_activation_matches_pytorch(name, reference):
    value, grad = minidl_result(activations.get(name))
    expected_value, expected_grad = torch_result(reference)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)


def test_arguments_match_pytorch():
    for ours, theirs in [
        (lambda x: activations.elu(x, alpha=0.5), lambda x: torch.nn.functional.elu(x, 0.5)),
        (lambda x: activations.gelu(x, approximate=True),
         lambda x: torch.nn.functional.gelu(x, approximate='tanh')),
        (lambda x: activations.softmax(x, axis=0), lambda x: torch.softmax(x, 0)),
        (lambda x: activations.softmax(x, axis=(0, 1)),
         lambda x: torch.softmax(x.reshape(-1), 0).reshape(x.shape)),
    ]:
        value, grad = minidl_result(ours)
        expected_value, expected_grad = torch_result(theirs)
        np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)


def keras_relu(x, alpha, max_value, threshold):
    """tf.keras's backend.relu, step by step in numpy."""
    positive = np.where(x > threshold, x, 0.0) if threshold else np.maximum(x, 0)
    if max_value is not None:
        positive = np.clip(positive, 0, max_value)
    return positive - alpha * np.maximum(threshold - x, 0)


@pytest.mark.parametrize('alpha, max_value, threshold', [
    (0.1, None, 0.0), (0.0, 2.0, 0.0), (0.0, None, 0.5), (0.2, 2.0, 0.5), (0.3, None, -1.0),
    (0.0, 1.0, -1.0),
])
def test_relu_arguments_follow_keras(alpha, max_value, threshold):
    def relu(x):
        return activations.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)
    np.testing.assert_allclose(relu(Tensor(X, dtype='float64')).numpy(),
                               keras_relu(X, alpha, max_value, threshold), rtol=1e-12)
    gradcheck(relu, [X])


def test_hard_sigmoid_is_keras_2s_piecewise_linear_function():
    x = np.array([[-3.0, -2.4, 0.0, 1.0, 2.6, 4.0]])
    np.testing.assert_allclose(activations.hard_sigmoid(Tensor(x)).numpy(),
                               [[0.0, 0.02, 0.5, 0.7, 1.0, 1.0]], atol=1e-6)


def test_softmax_and_sigmoid_record_their_logits():
    x = Tensor(X)
    for function, kind in [(activations.softmax, 'softmax'), (activations.sigmoid, 'sigmoid')]:
        logits, recorded_kind = function(x)._keras_logits
        assert logits is x and recorded_kind == kind
    assert activations.softmax(x, axis=1)._keras_logits[0] is x
    for output in [activations.softmax(x, axis=0), activations.tanh(x), activations.relu(x)]:
        assert not hasattr(output, '_keras_logits')


def test_array_input_gives_a_tensor_with_tensor_logits():
    y = activations.sigmoid(X.astype('float32'))
    assert isinstance(y, Tensor) and isinstance(y._keras_logits[0], Tensor)
    assert isinstance(activations.swish(X.astype('float32')), Tensor)


def test_softmax_of_a_vector_is_refused_as_in_keras():
    with pytest.raises(ValueError, match='at least 2 dimensions'):
        activations.softmax(Tensor([1.0, 2.0]))


def test_get_resolves_none_names_and_callables():
    assert activations.get(None) is activations.linear
    assert activations.get('relu') is activations.relu
    assert activations.get('silu') is activations.swish
    assert activations.get({'class_name': 'tanh', 'config': {}}) is activations.tanh

    def custom(x):
        return x
    assert activations.get(custom) is custom
    assert activations.deserialize('custom', custom_objects={'custom': custom}) is custom


def test_get_rejects_unknown_names_and_non_callables():
    with pytest.raises(ValueError, match=r"'relu_x'.*known:.*softmax"):
        activations.get('relu_x')
    with pytest.raises(TypeError, match='activation'):
        activations.get(3)


@pytest.mark.parametrize('name', [
    'linear', 'relu', 'relu6', 'leaky_relu', 'elu', 'selu', 'gelu', 'sigmoid', 'hard_sigmoid',
    'softmax', 'log_softmax', 'softplus', 'softsign', 'tanh', 'exponential', 'swish', 'mish'])
def test_serialize_gives_the_name_back(name):
    function = activations.get(name)
    assert activations.serialize(function) == name
    assert activations.get(activations.serialize(function)) is function
