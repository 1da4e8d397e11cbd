"""K.gradients with respect to inputs of unknown size and tensors inside a graph, and
Input(tensor=...), against central finite differences of the same functions."""

import numpy as np
import pytest

import minidl
from minidl import backend as K
from minidl.layers import Conv2D, Dense, Input, Lambda, MaxPooling2D
from minidl.models import Model


@pytest.fixture(autouse=True)
def float64():
    # Finite differences need float64 to agree closely with the analytic gradient.
    K.set_floatx('float64')
    yield
    K.set_floatx('float32')
    K.clear_session()


def finite_differences(f, x, eps=1e-6):
    """d f / d x for a scalar function ``f`` of an array, by central differences."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def conv_model():
    minidl.set_seed(3)
    image = Input((None, None, 2))  # any image size: the conv_filter_visualization input
    features = Conv2D(3, 3, padding='same', activation='tanh')(image)
    doubled = Lambda(lambda t: 2 * t + t * t)(features)
    return image, features, doubled


def test_gradient_with_respect_to_an_input_of_unknown_size():
    image, _, doubled = conv_model()
    loss = K.mean(K.square(doubled[:, :, :, 1]))
    grads = K.gradients(loss, image)[0]
    assert K.int_shape(grads) == (None, None, None, 2)
    iterate = K.function([image], [loss, grads])
    x = np.random.default_rng(0).standard_normal((2, 5, 4, 2))
    loss_value, grad_value = iterate([x])
    assert grad_value.shape == x.shape
    want = finite_differences(lambda v: float(K.function([image], [loss])([v])[0]), x)
    np.testing.assert_allclose(grad_value, want, rtol=1e-6, atol=1e-9)
    # Another size through the same function.
    assert iterate([x[:1, :3, :3]])[1].shape == (1, 3, 3, 2)


def test_gradient_with_respect_to_a_tensor_inside_the_graph():
    image, features, doubled = conv_model()
    loss = K.sum(K.pow(doubled, 3)) + K.sum(features)
    grad_features, grad_doubled = K.gradients(loss, [features, doubled])
    iterate = K.function([image], [features, grad_features, grad_doubled])
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 2))
    feature_values, grad_features_value, grad_doubled_value = iterate([x])
    # Feeding the tensor inside the graph makes the loss a function of it alone.
    from_features = K.function([features], [loss])
    want = finite_differences(lambda v: float(from_features([v])[0]), feature_values)
    np.testing.assert_allclose(grad_features_value, want, rtol=1e-6, atol=1e-9)
    doubled_values = 2 * feature_values + feature_values ** 2
    np.testing.assert_allclose(grad_doubled_value, 3 * doubled_values ** 2, rtol=1e-12)


def test_gradient_of_tensors_inside_a_lambda_in_training_and_inference():
    # mnist_swwae's "where" masks: the gradient of sum(max_pool(y)) with respect to y is 1
    # where each window's maximum is, computed from Tensors inside a Lambda, in fit
    # (autograd records) and in predict (it does not; the model reruns recording).
    def getwhere(args):
        before, after = args
        return K.gradients(K.sum(after), before)

    minidl.set_seed(4)
    image = Input((4, 4, 1))
    features = Conv2D(2, 1, kernel_initializer='ones', trainable=False)(image)
    pooled = MaxPooling2D()(features)
    where = Lambda(getwhere, output_shape=lambda shapes: shapes[0])([features, pooled])
    model = Model(image, where)
    x = np.random.default_rng(2).permutation(32).astype(float).reshape(2, 4, 4, 1)
    masks = model.predict(x)
    windows = x.reshape(2, 2, 2, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(2, 2, 2, 4)
    want = (windows == windows.max(-1, keepdims=True)).astype(float)
    want = want.reshape(2, 2, 2, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(2, 4, 4, 1)
    np.testing.assert_array_equal(masks, np.concatenate([want, want], axis=-1))
    np.testing.assert_array_equal(K.function([image], [where])([x])[0], masks)
    # In training, and with the loss's own backward through the graph afterwards.
    output = Dense(1)(minidl.layers.Flatten()(minidl.layers.multiply([features, where])))
    trained = Model(image, output)
    trained.compile('sgd', 'mse')
    before = trained.get_weights()
    trained.train_on_batch(x, np.ones((2, 1)))
    assert not all(np.array_equal(a, b) for a, b in zip(before, trained.get_weights()))
    np.testing.assert_array_equal(model.predict(x), masks)


def test_tensor_gradients_inside_no_grad_say_so():
    v = K.variable([1.0, 2.0])
    with minidl.no_grad():
        loss = K.sum(v * v)
        with pytest.raises(RuntimeError, match='no_grad'):
            K.gradients(loss, [v])


def test_input_wrapping_a_symbolic_tensor_and_a_constant():
    # neural_style_transfer's input: fixed images and a placeholder, concatenated.
    base = K.variable(np.full((1, 3), 2.0))
    placeholder = K.placeholder((1, 3))
    joined = K.concatenate([base, placeholder], axis=0)
    wrapped = Input(tensor=joined)
    assert K.int_shape(wrapped) == (2, 3)
    minidl.set_seed(5)
    outputs = Dense(2, activation='tanh')(wrapped)
    model = Model(wrapped, outputs)
    loss = K.sum(K.square(outputs[1]))
    grads = K.gradients(loss, placeholder)[0]
    iterate = K.function([placeholder], [loss, grads])
    value = np.array([[0.3, -0.2, 0.5]])
    loss_value, grad_value = iterate([value])
    want = finite_differences(lambda v: float(iterate([v])[0]), value)
    np.testing.assert_allclose(grad_value, want, rtol=1e-6, atol=1e-9)
    # Fed directly, the wrapping input is an ordinary model input.
    np.testing.assert_allclose(model.predict(np.concatenate([np.full((1, 3), 2.0), value]))[1],
                               K.function([placeholder], [outputs])([value])[0][1])

    constant = Input(tensor=K.variable(np.ones((2, 3))))
    assert K.int_shape(constant) == (2, 3)
    assert K.function([], [constant * 3])([])[0].tolist() == [[3.0] * 3] * 2
    with pytest.raises(ValueError, match='does not fit'):
        Input(shape=(4,), tensor=K.variable(np.ones((2, 3))))
