"""Optimizers written the Keras 2 way (``get_updates`` with ``K.update``) train through fit.

The two optimizers below are written as Keras 2.2.4's keras/optimizers.py
writes SGD and Adam: state in ``K.variable``/``K.zeros``, gradients from
``self.get_gradients``, a list of ``K.update``/``K.update_add`` operations.
minidl calls ``get_updates`` at every step (minidl.optimizers.keras_updates).

What equality to expect against the built-in optimizer, and why:

- SGD with or without momentum: the same bits. Each new value is the same
  float32 operation on the same operands (``momentum * m - lr * g``, then
  ``p + v``), whichever code computes it.
- Nesterov momentum and Adam: float32 rounding. Keras's Nesterov step is
  ``p + momentum * v - lr * g``, the built-in computes ``p - (lr * g -
  momentum * v)``; Keras's Adam computes ``1 - beta_1`` and its step size
  ``lr_t`` in float32 from float32 variables, the built-in in float64
  from Python floats.
"""

import numpy as np
import pytest

import minidl
from minidl import backend as K
from minidl.callbacks import LearningRateScheduler
from minidl.layers import Dense
from minidl.models import Sequential, load_model
from minidl.optimizers import SGD, Adam, Optimizer


class KerasSGD(Optimizer):
    """Keras 2.2.4's SGD, as a user would copy it into a project."""

    def __init__(self, lr=0.01, momentum=0., decay=0., nesterov=False, **kwargs):
        super().__init__(**kwargs)
        with K.name_scope(self.__class__.__name__):
            self.iterations = K.variable(0, dtype='int64', name='iterations')
            self.lr = K.variable(lr, name='lr')
            self.momentum = K.variable(momentum, name='momentum')
            self.decay = K.variable(decay, name='decay')
        self.initial_decay = decay
        self.nesterov = nesterov

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        self.updates = [K.update_add(self.iterations, 1)]
        lr = self.lr
        if self.initial_decay > 0:
            lr = lr * (1. / (1. + self.decay * K.cast(self.iterations, K.dtype(self.decay))))
        moments = [K.zeros(K.int_shape(p)) for p in params]
        self.weights = [self.iterations] + moments
        for p, g, m in zip(params, grads, moments):
            v = self.momentum * m - lr * g  # velocity
            self.updates.append(K.update(m, v))
            new_p = p + self.momentum * v - lr * g if self.nesterov else p + v
            if getattr(p, 'constraint', None) is not None:
                new_p = p.constraint(new_p)
            self.updates.append(K.update(p, new_p))
        return self.updates

    def get_config(self):
        config = {'lr': float(K.get_value(self.lr)),
                  'momentum': float(K.get_value(self.momentum)),
                  'decay': float(K.get_value(self.decay)), 'nesterov': self.nesterov}
        return dict(list(super().get_config().items()) + list(config.items()))


class KerasAdam(Optimizer):
    """An Adam written as Keras 2.2.4 writes it, with K.gradients called directly."""

    def __init__(self, lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.iterations = K.variable(0, dtype='int64', name='iterations')
        self.lr = K.variable(lr, name='lr')
        self.beta_1 = K.variable(beta_1, name='beta_1')
        self.beta_2 = K.variable(beta_2, name='beta_2')
        self.epsilon = epsilon

    def get_updates(self, loss, params):
        grads = K.gradients(loss, params)
        self.updates = [K.update_add(self.iterations, 1)]
        t = K.cast(self.iterations, K.floatx()) + 1
        lr_t = self.lr * (K.sqrt(1. - K.pow(self.beta_2, t)) / (1. - K.pow(self.beta_1, t)))
        ms = [K.zeros(K.int_shape(p), dtype=K.dtype(p)) for p in params]
        vs = [K.zeros(K.int_shape(p), dtype=K.dtype(p)) for p in params]
        self.weights = [self.iterations] + ms + vs
        for p, g, m, v in zip(params, grads, ms, vs):
            m_t = (self.beta_1 * m) + (1. - self.beta_1) * g
            v_t = (self.beta_2 * v) + (1. - self.beta_2) * K.square(g)
            p_t = p - lr_t * m_t / (K.sqrt(v_t) + self.epsilon)
            self.updates += [K.update(m, m_t), K.update(v, v_t), K.update(p, p_t)]
        return self.updates


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 6)).astype('float32')
    y = np.stack([x[:, 0] - x[:, 1], np.tanh(x[:, 2])], axis=1).astype('float32')
    return x, y


def _model(optimizer):
    minidl.set_seed(3)
    model = Sequential([Dense(16, activation='tanh', input_shape=(6,)), Dense(2)])
    model.compile(optimizer, 'mse')
    return model


def _trained(optimizer, epochs=4, **kwargs):
    x, y = _data()
    model = _model(optimizer)
    history = model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, **kwargs)
    return model, history.history['loss']


@pytest.mark.parametrize('momentum', [0.0, 0.9])
def test_keras_style_sgd_gives_the_builtin_sgds_bits(momentum):
    custom, custom_loss = _trained(KerasSGD(lr=0.05, momentum=momentum))
    builtin, builtin_loss = _trained(SGD(lr=0.05, momentum=momentum))
    assert custom_loss == builtin_loss
    for mine, theirs in zip(custom.get_weights(), builtin.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    # Its own iteration counter counted every step (4 epochs of 6 batches).
    assert K.get_value(custom.optimizer.iterations) == 24
    velocity = custom.optimizer.get_weights()[1:]
    assert len(velocity) == 4
    if momentum:
        for mine, theirs in zip(velocity, builtin.optimizer.get_weights()[1:]):
            np.testing.assert_array_equal(mine, theirs)


def test_keras_style_nesterov_and_adam_agree_with_the_builtins_to_float32_rounding():
    for custom_optimizer, builtin_optimizer in [
            (KerasSGD(lr=0.05, momentum=0.9, nesterov=True),
             SGD(lr=0.05, momentum=0.9, nesterov=True)),
            (KerasAdam(lr=0.01), Adam(lr=0.01))]:
        custom, custom_loss = _trained(custom_optimizer)
        builtin, builtin_loss = _trained(builtin_optimizer)
        np.testing.assert_allclose(custom_loss, builtin_loss, rtol=1e-5)
        for mine, theirs in zip(custom.get_weights(), builtin.get_weights()):
            np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)
        assert not all(np.array_equal(a, b)
                       for a, b in zip(custom.get_weights(), builtin.get_weights()))


def test_keras_style_optimizer_is_deterministic_and_learns():
    first, loss = _trained(KerasAdam(lr=0.01))
    second, _ = _trained(KerasAdam(lr=0.01))
    for a, b in zip(first.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert loss[-1] < 0.5 * loss[0]


def test_variables_are_made_once_and_kept_from_step_to_step():
    optimizer = KerasSGD(lr=0.05, momentum=0.9)
    model, _ = _trained(optimizer, epochs=1)
    moments = optimizer.weights[1:]
    x, y = _data()
    model.train_on_batch(x[:16], y[:16])
    assert all(a is b for a, b in zip(optimizer.weights[1:], moments))
    assert K.get_value(optimizer.iterations) == 7
    names = optimizer.weight_names()
    assert len(names) == len(set(names)) == 5 and names[0] == 'KerasSGD/iterations:0'


def test_learning_rate_variable_is_set_by_callbacks_and_k_set_value():
    seen = []

    def schedule(epoch):
        seen.append(epoch)
        return 0.05 if epoch == 0 else 0.0

    optimizer = KerasSGD(lr=0.05)
    model, _ = _trained(optimizer, epochs=1)
    before = model.get_weights()
    K.set_value(model.optimizer.lr, 0.0)
    x, y = _data()
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)  # a zero rate: nothing moves
    model.fit(x, y, batch_size=16, epochs=2, verbose=0,
              callbacks=[LearningRateScheduler(schedule)])
    assert seen == [0, 1]
    assert float(K.get_value(model.optimizer.lr)) == 0.0


def test_get_gradients_clips_as_the_optimizer_says():
    x, y = _data()
    clipped = _model(KerasSGD(lr=0.1, clipvalue=1e-3))
    builtin = _model(SGD(lr=0.1, clipvalue=1e-3))
    for model in (clipped, builtin):
        model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    for a, b in zip(clipped.get_weights(), builtin.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_an_optimizer_without_its_own_iterations_counts_in_minidls():
    class PlainSGD(Optimizer):
        def get_updates(self, loss, params):
            grads = self.get_gradients(loss, params)
            return [K.update_sub(p, self.lr * g) for p, g in zip(params, grads)]

    model, _ = _trained(PlainSGD(lr=0.05), epochs=1)
    builtin, _ = _trained(SGD(lr=0.05), epochs=1)
    assert model.optimizer.iterations == 6
    for a, b in zip(model.get_weights(), builtin.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_get_updates_must_make_the_same_variables_every_step():
    class Fickle(Optimizer):
        calls = 0

        def get_updates(self, loss, params):
            Fickle.calls += 1
            for _ in range(Fickle.calls):
                K.zeros((1,))
            grads = self.get_gradients(loss, params)
            return [K.update_sub(p, 0.1 * g) for p, g in zip(params, grads)]

    x, y = _data()
    model = _model(Fickle())
    with pytest.raises(ValueError, match='same ones on every call'):
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)


def test_get_gradients_refuses_other_losses():
    with pytest.raises(TypeError, match='training step'):
        KerasSGD().get_gradients(K.variable(1.0), [K.variable([1.0])])
    with pytest.raises(NotImplementedError, match='get_updates'):
        SGD().get_updates(None, [])


def test_saved_state_resumes_training_exactly(tmp_path):
    x, y = _data()
    straight, _ = _trained(KerasSGD(lr=0.05, momentum=0.9), epochs=3)
    first, _ = _trained(KerasSGD(lr=0.05, momentum=0.9), epochs=1)
    path = str(tmp_path / 'model.h5')
    first.save(path)
    resumed = load_model(path, custom_objects={'KerasSGD': KerasSGD})
    assert isinstance(resumed.optimizer, KerasSGD)
    assert float(K.get_value(resumed.optimizer.lr)) == pytest.approx(0.05)
    assert K.get_value(resumed.optimizer.iterations) == 6
    resumed.fit(x, y, batch_size=16, epochs=3, initial_epoch=1, verbose=0)
    for a, b in zip(straight.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_builtin_optimizers_weights_are_keras_2s_list_of_its_state():
    model, _ = _trained(Adam(lr=0.01), epochs=1)
    optimizer = model.optimizer
    values = K.batch_get_value(optimizer.weights)
    for value, expected in zip(values, optimizer.get_weights()):
        np.testing.assert_array_equal(value, expected)
    assert values[0] == 6 and len(values) == 1 + 2 * 4
    K.set_value(optimizer.weights[1], np.zeros_like(values[1]))  # writes into the slot
    np.testing.assert_array_equal(optimizer.get_weights()[1], 0.0)
