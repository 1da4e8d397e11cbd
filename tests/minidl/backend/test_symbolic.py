"""Backend functions, operators and losses on symbolic tensors record graph nodes.

Each graph is checked by a model's predictions against numpy; the Keras 2
examples' computations (antirectifier, mnist_siamese, variational_autoencoder)
are written here as those scripts write them.
"""

import numpy as np
import pytest

from minidl import backend as K
from minidl import losses, optimizers
from minidl.gradcheck import gradcheck
from minidl.layers import Dense, Input, Lambda, Layer
from minidl.layers.operation import Operation
from minidl.models import Model, Sequential
from minidl.tensor import Tensor

rng = np.random.default_rng(7)
x_values = rng.standard_normal((4, 3)).astype('float32')


def predict(inputs, outputs, *values):
    return Model(inputs, outputs).predict(list(values) if len(values) > 1 else values[0],
                                          verbose=0)


def test_model_of_backend_functions():
    inputs = Input((3,))
    outputs = K.sum(K.square(inputs) + 1, axis=-1)
    assert K.int_shape(outputs) == (None,) and K.is_keras_tensor(outputs)
    assert isinstance(outputs.node.layer, Operation)
    np.testing.assert_allclose(predict(inputs, outputs, x_values),
                               np.sum(x_values ** 2 + 1, axis=-1), rtol=1e-6)


def test_operators_record_nodes():
    inputs = Input((3,))
    other = Input((3,))
    outputs = [inputs + other, 2.0 - inputs, inputs * other, 1.0 / (inputs + 10), inputs ** 2,
               2 ** inputs, -inputs, abs(inputs), inputs[:, 1:], inputs[:, 0],
               inputs @ K.variable(np.eye(3) * 2), inputs > 0, 0.5 <= inputs,
               np.float32(3.0) * inputs]
    got = Model([inputs, other], outputs).predict([x_values, x_values * 2], verbose=0)
    a, b = x_values, x_values * 2
    want = [a + b, 2 - a, a * b, 1 / (a + 10), a ** 2, 2 ** a, -a, np.abs(a), a[:, 1:], a[:, 0],
            a @ (np.eye(3) * 2), a > 0, a >= 0.5, 3 * a]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_symbolic_tensors_keep_identity_equality_and_refuse_values():
    inputs = Input((3,))
    assert inputs == inputs and inputs in [Input((3,)), inputs] and inputs != Input((3,))
    with pytest.raises(TypeError, match='cannot be iterated'):
        list(inputs)
    with pytest.raises(TypeError, match='no value to convert'):
        np.asarray(inputs)
    with pytest.raises(TypeError, match='condition'):
        bool(inputs > 0)


def test_shapes_of_recorded_outputs():
    sequences = Input((None, 4))
    assert K.int_shape(K.mean(sequences, axis=-1)) == (None, None)
    assert K.int_shape(K.sum(sequences, axis=0)) == (None, 4)
    assert K.int_shape(K.mean(sequences)) == ()
    assert K.int_shape(K.batch_flatten(Input((2, 3)))) == (None, 6)
    assert K.int_shape(K.shape(sequences)) == (3,) and K.shape(sequences).dtype == np.int32
    assert K.int_shape(K.reshape(sequences, (K.shape(sequences)[0], -1))) == (None, None)
    assert K.argmax(sequences).dtype == np.int64
    pair = K.normalize_batch_in_training(Input((5,)), None, None, [0])
    assert [K.int_shape(t) for t in pair] == [(None, 5), (5,), (5,)]


def test_a_failing_function_is_named_with_the_shapes():
    with pytest.raises(ValueError, match=r'dot cannot be applied to the symbolic tensors of '
                                         r'shapes \(None, 3\)'):
        K.dot(Input((3,)), K.variable(np.zeros((4, 2))))


def test_a_model_with_operations_cannot_be_serialized():
    inputs = Input((3,))
    model = Model(inputs, K.exp(inputs))
    with pytest.raises(TypeError, match="layer 'exp.*' applies exp .* Python code"):
        model.get_config()


class Antirectifier(Layer):
    """Keras 2's examples/antirectifier.py layer, as written there."""

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[-1] *= 2
        return tuple(shape)

    def call(self, inputs):
        inputs -= K.mean(inputs, axis=1, keepdims=True)
        inputs = K.l2_normalize(inputs, axis=1)
        pos = K.relu(inputs)
        neg = K.relu(-inputs)
        return K.concatenate([pos, neg], axis=1)


def _antirectifier(x):
    centered = x - x.mean(axis=1, keepdims=True)
    normed = centered / np.sqrt(np.maximum(np.sum(centered ** 2, axis=1, keepdims=True), 1e-12))
    return np.concatenate([np.maximum(normed, 0), np.maximum(-normed, 0)], axis=1)


def test_antirectifier_layer():
    model = Sequential([Antirectifier(input_shape=(3,))])
    assert model.output_shape == (None, 6)
    np.testing.assert_allclose(model.predict(x_values, verbose=0), _antirectifier(x_values),
                               rtol=1e-5, atol=1e-7)
    assert gradcheck(lambda x: Antirectifier().call(x), [x_values.astype('float64')])


def euclidean_distance(vects):
    x, y = vects
    sum_square = K.sum(K.square(x - y), axis=1, keepdims=True)
    return K.sqrt(K.maximum(sum_square, K.epsilon()))


def contrastive_loss(y_true, y_pred):
    margin = 1
    sqaure_pred = K.square(y_pred)
    margin_square = K.square(K.maximum(margin - y_pred, 0))
    return K.mean(y_true * sqaure_pred + (1 - y_true) * margin_square)


def accuracy(y_true, y_pred):
    return K.mean(K.equal(y_true, K.cast(y_pred < 0.5, y_true.dtype)))


def test_siamese_distance_lambda_loss_and_metric():
    # Keras 2's examples/mnist_siamese.py: a shared network, the distance in a Lambda,
    # the contrastive loss and the accuracy written with K.
    base = Dense(2, weights=[np.eye(3, 2, dtype='float32'), np.zeros(2, 'float32')])
    left, right = Input((3,)), Input((3,))
    distance = Lambda(euclidean_distance, output_shape=lambda shapes: (shapes[0][0], 1))(
        [base(left), base(right)])
    model = Model([left, right], distance)
    a, b = x_values, rng.standard_normal((4, 3)).astype('float32')
    want = np.sqrt(np.maximum(np.sum((a[:, :2] - b[:, :2]) ** 2, 1, keepdims=True), 1e-7))
    np.testing.assert_allclose(model.predict([a, b], verbose=0), want, rtol=1e-5)
    labels = np.array([[1.0], [0.0], [1.0], [0.0]], 'float32')
    model.compile(loss=contrastive_loss, optimizer=optimizers.SGD(), metrics=[accuracy])
    loss, acc = model.evaluate([a, b], labels, verbose=0)
    want_loss = np.mean(labels * want ** 2 + (1 - labels) * np.maximum(1 - want, 0) ** 2)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    np.testing.assert_allclose(acc, np.mean(labels == (want < 0.5)), rtol=1e-6)


def test_losses_on_symbolic_tensors_record_nodes():
    inputs = Input((3,))
    outputs = Dense(3, activation='sigmoid')(inputs)
    reconstruction = losses.binary_crossentropy(inputs, outputs)
    squared = losses.mse(inputs, outputs)
    assert K.int_shape(reconstruction) == (None,)
    targets = rng.uniform(0, 1, (4, 3)).astype('float32')
    got_bce, got_mse, probabilities = Model(inputs, [reconstruction, squared, outputs]).predict(
        targets, verbose=0)
    p = np.clip(probabilities, 1e-7, 1 - 1e-7)
    np.testing.assert_allclose(
        got_bce, -np.mean(targets * np.log(p) + (1 - targets) * np.log(1 - p), -1), rtol=1e-4)
    np.testing.assert_allclose(got_mse, np.mean((targets - probabilities) ** 2, -1), rtol=1e-5)


def test_variational_autoencoder_loss_graph():
    # Keras 2's examples/variational_autoencoder.py, its sampling and its loss.
    def sampling(args):
        z_mean, z_log_var = args
        batch = K.shape(z_mean)[0]
        dim = K.int_shape(z_mean)[1]
        epsilon = K.random_normal(shape=(batch, dim))
        return z_mean + K.exp(0.5 * z_log_var) * epsilon

    inputs = Input((6,))
    hidden = Dense(4, activation='relu')(inputs)
    z_mean, z_log_var = Dense(2)(hidden), Dense(2)(hidden)
    z = Lambda(sampling, output_shape=(2,))([z_mean, z_log_var])
    encoder = Model(inputs, [z_mean, z_log_var, z])
    latent = Input((2,))
    decoder = Model(latent, Dense(6, activation='sigmoid')(latent))
    outputs = decoder(encoder(inputs)[2])
    reconstruction_loss = losses.binary_crossentropy(inputs, outputs)
    reconstruction_loss *= 6
    kl_loss = 1 + z_log_var - K.square(z_mean) - K.exp(z_log_var)
    kl_loss = K.sum(kl_loss, axis=-1)
    kl_loss *= -0.5
    vae_loss = K.mean(reconstruction_loss + kl_loss)
    assert K.int_shape(vae_loss) == ()
    data = rng.uniform(0, 1, (5, 6)).astype('float32')
    mean, log_var, kl = Model(inputs, [z_mean, z_log_var, kl_loss]).predict(data, verbose=0)
    np.testing.assert_allclose(kl, -0.5 * np.sum(1 + log_var - mean ** 2 - np.exp(log_var), -1),
                               rtol=1e-5, atol=1e-6)
    assert K.function([inputs], [vae_loss])([data])[0].shape == ()


def test_training_flows_through_operation_nodes():
    inputs = Input((3,))
    dense = Dense(2, weights=[np.ones((3, 2), 'float32'), np.zeros(2, 'float32')])
    outputs = K.tanh(dense(inputs)) * 3.0
    model = Model(inputs, outputs)
    model.compile(optimizer=optimizers.SGD(learning_rate=0.1), loss='mse')
    targets = np.zeros((4, 2), 'float32')
    model.train_on_batch(x_values, targets)
    # d mean((3 tanh(x W))^2) / dW = x^T (2 * 3 tanh(.) * 3 (1 - tanh(.)^2)) / (4 * 2)
    y = np.tanh(x_values @ np.ones((3, 2)))
    grad = x_values.T @ (2 * 3 * y * 3 * (1 - y ** 2)) / 8
    np.testing.assert_allclose(dense.get_weights()[0], 1 - 0.1 * grad, rtol=1e-5)


def test_a_model_with_operations_inside_another_model():
    inputs = Input((3,))
    inner = Model(inputs, K.concatenate([inputs, K.square(inputs)]))
    outer_input = Input((3,))
    outer = Model(outer_input, K.sum(inner(outer_input), axis=1))
    np.testing.assert_allclose(outer.predict(x_values, verbose=0),
                               np.sum(x_values + x_values ** 2, 1), rtol=1e-5)


def test_concrete_calls_are_unchanged():
    value = Tensor(x_values)
    assert isinstance(K.square(value), Tensor)
    assert isinstance(losses.mse(value, value), Tensor)


def test_weights_of_a_model_with_operations_round_trip(tmp_path):
    def build():
        inputs = Input((3,))
        return Model(inputs, K.tanh(Dense(2)(inputs)) * 2)

    model, copy = build(), build()
    model.save_weights(str(tmp_path / 'weights.h5'))
    copy.load_weights(str(tmp_path / 'weights.h5'))
    np.testing.assert_array_equal(copy.predict(x_values, verbose=0),
                                  model.predict(x_values, verbose=0))


def test_a_tensor_on_the_left_of_a_symbolic_tensor_records_a_node():
    inputs = Input((3,))
    scale = K.variable(np.array([1.0, 2.0, 3.0]))
    model = Model(inputs, scale * inputs - K.constant(1.0))
    x = np.arange(6, dtype='float32').reshape(2, 3)
    np.testing.assert_allclose(model.predict(x), x * [1.0, 2.0, 3.0] - 1.0)
