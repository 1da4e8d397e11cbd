"""add_loss: terms added in a layer's call, and a model's symbolic losses (the VAE example).

Each objective is written again in PyTorch, or by hand in numpy, on the
same weights and batches; fit must land on the same weights and report
the same losses.
"""

import numpy as np
import pytest

import minidl
import minidl.functions as F
from minidl.layers import Dense, Input, Lambda, Layer
from minidl.models import Model, Sequential
from minidl.optimizers import SGD
from minidl.regularizers import l2

torch = pytest.importorskip('torch')


class KLDivergence(Layer):
    """Passes ``[mean, log_var]`` through, adding their batch-mean KL divergence to N(0, 1)."""

    def call(self, inputs):
        mean, log_var = inputs
        kl = -0.5 * F.sum(1 + log_var - mean * mean - F.exp(log_var), axis=-1)
        self.add_loss(F.mean(kl))
        return mean

    def compute_output_shape(self, input_shape):
        return input_shape[0]


def _kl(mean, log_var):
    return float(np.mean(-0.5 * np.sum(1 + log_var - mean ** 2 - np.exp(log_var), axis=-1)))


def _data(count=10, seed=0):
    return np.random.default_rng(seed).uniform(0, 1, (count, 6)).astype('float32')


def test_a_layer_adds_the_term_of_the_current_batch_only():
    minidl.set_seed(0)
    inputs = Input((6,))
    mean, log_var = Dense(2)(inputs), Dense(2)(inputs)
    model = Model(inputs, KLDivergence()([mean, log_var]))
    probe = Model(inputs, [mean, log_var])
    for seed in (1, 2):
        x = _data(seed=seed)
        model(x)
        assert len(model.losses) == 1
        assert model.losses[0].item() == pytest.approx(_kl(*probe.predict(x)), rel=1e-5)


def test_a_shared_layer_adds_a_term_for_each_call():
    minidl.set_seed(0)
    shared = Dense(3, activity_regularizer=l2(0.1))
    left, right = Input((6,)), Input((6,))
    model = Model([left, right], [shared(left), shared(right)])
    x, z = _data(seed=1), _data(seed=2)
    outputs = model.predict([x, z])
    model([x, z])
    penalties = sorted(loss.item() for loss in model.losses)
    expected = sorted(0.1 * float(np.sum(y ** 2)) / len(y) for y in outputs)
    np.testing.assert_allclose(penalties, expected, rtol=1e-5)


class PenalisedDense(Dense):
    """A Dense layer adding 0.01 * sum(kernel ** 2) in its call."""

    def call(self, inputs):
        self.add_loss(0.01 * F.sum(self.kernel * self.kernel))
        return super().call(inputs)


def test_a_weight_penalty_added_in_call_trains_as_the_regularizer():
    x, y = _data(), _data(seed=1)[:, :2]
    trained = []
    for first in (PenalisedDense(2, input_shape=(6,)),
                  Dense(2, input_shape=(6,), kernel_regularizer=l2(0.01))):
        minidl.set_seed(0)
        model = Sequential([first])
        model.compile(SGD(learning_rate=0.5), 'mse')
        history = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
        trained.append((model.get_weights(), history.history['loss']))
    (weights, losses), (expected_weights, expected_losses) = trained
    for ours, theirs in zip(weights, expected_weights):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-6)


def _vae_loss(tensors):
    x, decoded, mean, log_var = tensors
    reconstruction = F.mean((x - decoded) * (x - decoded), axis=-1) * 6
    kl = -0.5 * F.sum(1 + log_var - mean * mean - F.exp(log_var), axis=-1)
    return F.mean(reconstruction + kl)


def _vae():
    """Keras's variational autoencoder example, small and without the sampling."""
    minidl.set_seed(5)
    inputs = Input((6,), name='encoder_input')
    hidden = Dense(4, activation='tanh', activity_regularizer=l2(0.01), name='hidden')(inputs)
    z_mean = Dense(2, name='z_mean')(hidden)
    z_log_var = Dense(2, name='z_log_var')(hidden)
    encoder = Model(inputs, [z_mean, z_log_var], name='encoder')
    latent = Input((2,), name='z')
    decoder = Model(latent, Dense(6, activation='sigmoid', name='out')(latent), name='decoder')
    outputs = decoder(encoder(inputs)[0])
    vae = Model(inputs, outputs, name='vae')
    # z_mean and z_log_var belong to the encoder's own graph, which starts at the same Input.
    vae.add_loss(Lambda(_vae_loss, output_shape=lambda shapes: ())(
        [inputs, outputs, z_mean, z_log_var]))
    return vae, encoder, decoder


def _torch_objective(params, x):
    hidden = torch.tanh(x @ params[0] + params[1])
    mean = hidden @ params[2] + params[3]
    log_var = hidden @ params[4] + params[5]
    decoded = torch.sigmoid(mean @ params[6] + params[7])
    reconstruction = ((x - decoded) ** 2).mean(dim=-1) * 6
    kl = -0.5 * (1 + log_var - mean ** 2 - log_var.exp()).sum(dim=-1)
    activity = 0.01 * (hidden ** 2).sum() / len(x)
    return (reconstruction + kl).mean() + activity


def test_the_vae_example_trains_on_its_added_loss_without_targets():
    x, x_val = _data(), _data(count=5, seed=1)
    vae, encoder, decoder = _vae()
    params = [torch.tensor(w, requires_grad=True) for name in ('hidden', 'z_mean', 'z_log_var')
              for w in encoder.get_layer(name).get_weights()]
    params += [torch.tensor(w, requires_grad=True) for w in decoder.get_layer('out').get_weights()]
    vae.compile(SGD(learning_rate=0.2))
    history = vae.fit(x, epochs=2, batch_size=5, shuffle=False, verbose=0,
                      validation_data=(x_val, None))

    losses = []
    for _ in range(2):
        total = 0.0
        for start in (0, 5):
            loss = _torch_objective(params, torch.tensor(x[start:start + 5]))
            total += loss.item() * 5
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for param, grad in zip(params, grads):
                    param -= 0.2 * grad
        losses.append(total / len(x))
    np.testing.assert_allclose(history.history['loss'], losses, rtol=1e-5)
    val_loss = _torch_objective(params, torch.tensor(x_val)).item()
    assert history.history['val_loss'][-1] == pytest.approx(val_loss, rel=1e-5)
    assert vae.evaluate(x_val, verbose=0) == pytest.approx(val_loss, rel=1e-5)
    ours = [w for name in ('hidden', 'z_mean', 'z_log_var')
            for w in encoder.get_layer(name).get_weights()] + decoder.get_layer('out').get_weights()
    for mine, theirs in zip(ours, params):
        np.testing.assert_allclose(mine, theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    vae(x_val)
    assert len(vae.losses) == 2  # the activity penalty (once) and the added loss


def test_added_loss_and_compiled_loss_add_up():
    x, y = _data(), _data(seed=1)[:, :3]
    minidl.set_seed(0)
    inputs = Input((6,))
    hidden = Dense(4, activation='tanh')(inputs)
    model = Model(inputs, Dense(3)(hidden))
    model.add_loss(Lambda(lambda t: 0.5 * F.mean(t * t), output_shape=lambda s: ())(hidden))
    model.compile('sgd', 'mse')
    hidden_values = Model(inputs, hidden).predict(x)
    expected = np.mean((model.predict(x) - y) ** 2) + 0.5 * np.mean(hidden_values ** 2)
    assert model.evaluate(x, y, batch_size=len(x), verbose=0) == pytest.approx(expected, rel=1e-5)


def test_mistakes_are_named():
    inputs, other = Input((6,)), Input((6,))
    model = Model(inputs, Dense(2)(inputs))
    with pytest.raises(ValueError, match="computed from the model's inputs"):
        model.add_loss(Lambda(F.mean, output_shape=lambda s: ())(other))
    with pytest.raises(TypeError, match='add losses computed from a graph to the model'):
        Dense(2).add_loss(Lambda(F.mean, output_shape=lambda s: ())(inputs))
    with pytest.raises(ValueError, match='scalar losses'):
        Dense(2).add_loss(minidl.Tensor(np.ones(3)))
    model.compile('sgd')
    with pytest.raises(ValueError, match='no loss to optimize'):
        model.fit(_data(), epochs=1, verbose=0)
    with pytest.raises(ValueError, match='no output with a loss'):
        model.fit(_data(), _data(), epochs=1, verbose=0)
