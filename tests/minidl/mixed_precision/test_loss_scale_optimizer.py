"""LossScaleOptimizer: skipped steps on overflow, the scale's moves, exact unscaling."""

import numpy as np
import pytest

import minidl
from minidl import Tensor, optimizers
from minidl.layers import Dense
from minidl.mixed_precision import LossScaleOptimizer
from minidl.models import Sequential
from minidl.optimizers import SGD, Adam


def _param(value=1.0):
    return Tensor(np.full(3, value, np.float32), requires_grad=True)


def _step(optimizer, param, grad):
    param.grad = Tensor(np.asarray(grad, np.float32))
    return optimizer.apply_gradients([param])


def _mlp(policy=None, seed=0):
    minidl.set_seed(seed)
    return Sequential([Dense(8, activation='tanh', input_shape=(4,), dtype=policy),
                       Dense(3, activation='softmax', dtype=policy)])


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(32, 4)).astype(np.float32), rng.integers(0, 3, 32)


def test_defaults_are_tf_keras():
    optimizer = LossScaleOptimizer(SGD())
    assert (optimizer.loss_scale, optimizer.dynamic_growth_steps, optimizer.good_steps) == \
        (2.0 ** 15, 2000, 0)


def test_the_gradients_are_unscaled_before_the_inner_update():
    optimizer, param = LossScaleOptimizer(SGD(0.5), initial_scale=8), _param()
    assert _step(optimizer, param, [8.0, -16.0, 4.0]) is True
    # SGD on the gradient divided by 8: 1 - 0.5 * [1, -2, 0.5].
    np.testing.assert_array_equal(param.numpy(), np.float32([0.5, 2.0, 0.75]))
    np.testing.assert_array_equal(param.grad.numpy(), np.float32([1.0, -2.0, 0.5]))


@pytest.mark.parametrize('bad', [np.inf, -np.inf, np.nan])
def test_a_non_finite_gradient_skips_the_step(bad):
    optimizer, param = LossScaleOptimizer(Adam(0.1), initial_scale=64), _param()
    _step(optimizer, param, [1.0, 2.0, 3.0])  # makes Adam's slots
    weights, state = param.numpy().copy(), optimizer.inner_optimizer.get_weights()
    assert optimizer.iterations == 1 and optimizer.good_steps == 1
    assert _step(optimizer, param, [1.0, bad, 3.0]) is False
    assert optimizer.last_step_skipped
    np.testing.assert_array_equal(param.numpy(), weights)  # bitwise: assert_array_equal
    after = optimizer.inner_optimizer.get_weights()
    for before_slot, after_slot in zip(state[1:], after[1:]):
        assert before_slot.tobytes() == after_slot.tobytes()
    # Halved, the count of good steps restarted; iterations counts the step, as in tf.keras.
    assert (optimizer.loss_scale, optimizer.good_steps, optimizer.iterations) == (32.0, 0, 2)


def test_the_scale_doubles_after_n_finite_steps_in_a_row():
    optimizer, param = LossScaleOptimizer(SGD(0.0), initial_scale=4,
                                          dynamic_growth_steps=3), _param()
    seen = []
    for grad in [1, 1, 1, 1, np.inf, 1, 1, 1, 1, 1]:
        _step(optimizer, param, [grad] * 3)
        seen.append((optimizer.loss_scale, optimizer.good_steps))
    assert seen == [(4, 1), (4, 2), (8, 0), (8, 1), (4, 0),
                    (4, 1), (4, 2), (8, 0), (8, 1), (8, 2)]


def test_the_scale_never_falls_below_one():
    optimizer, param = LossScaleOptimizer(SGD(), initial_scale=2), _param()
    for _ in range(3):
        _step(optimizer, param, [np.inf] * 3)
    assert optimizer.loss_scale == 1.0 and optimizer.iterations == 3


def test_a_fixed_scale_never_moves_and_always_applies():
    optimizer, param = LossScaleOptimizer(SGD(1.0), dynamic=False, initial_scale=4), _param()
    for _ in range(3):
        assert _step(optimizer, param, [4.0, 4.0, 4.0]) is True
    np.testing.assert_array_equal(param.numpy(), np.float32([-2, -2, -2]))
    assert optimizer.loss_scale == 4.0


def test_a_huge_scale_overflows_float16_in_fit_and_the_step_is_skipped():
    model = _mlp('mixed_float16')
    optimizer = LossScaleOptimizer(Adam(0.01))
    model.compile(optimizer, 'sparse_categorical_crossentropy')
    x, y = _data()
    model.train_on_batch(x, y)  # a finite step at 2**15 (slots made)
    assert not optimizer.last_step_skipped
    weights, state = model.get_weights(), optimizer.inner_optimizer.get_weights()
    optimizer.loss_scale = 2.0 ** 40  # loss * 2**40 is finite in float32, inf in float16
    with np.errstate(all='ignore'):
        model.train_on_batch(x, y)
    assert optimizer.last_step_skipped and optimizer.loss_scale == 2.0 ** 39
    for before, after in zip(weights, model.get_weights()):
        assert before.tobytes() == after.tobytes()
    for before, after in zip(state[1:], optimizer.inner_optimizer.get_weights()[1:]):
        assert before.tobytes() == after.tobytes()
    assert optimizer.iterations == 2


def test_scaling_by_a_power_of_two_is_exact_in_float32():
    # Without float16 anywhere the scaled loss's gradients divided by 2**10 are the
    # plain gradients bit for bit, so training gives a plain SGD's weights exactly.
    x, y = _data(1)
    results = []
    for optimizer in (SGD(0.1, momentum=0.9),
                      LossScaleOptimizer(SGD(0.1, momentum=0.9), initial_scale=2 ** 10)):
        model = _mlp()
        model.compile(optimizer, 'sparse_categorical_crossentropy')
        model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        results.append(model.get_weights())
    for plain, scaled in zip(*results):
        assert plain.tobytes() == scaled.tobytes()


def test_rate_iterations_and_options_are_the_inner_optimizers():
    inner = SGD(0.1, momentum=0.9, clipnorm=2.0)
    optimizer = LossScaleOptimizer(inner)
    optimizer.learning_rate = 0.5
    assert inner.learning_rate == 0.5 and optimizer.lr == 0.5
    optimizer.iterations = 7
    assert inner.iterations == 7
    assert optimizer.momentum == 0.9 and optimizer.clipnorm == 2.0


def test_config_round_trip_and_state():
    optimizer = LossScaleOptimizer(Adam(0.01), initial_scale=256, dynamic_growth_steps=10)
    config = optimizers.serialize(optimizer)
    assert config['class_name'] == 'LossScaleOptimizer'
    assert config['config']['inner_optimizer']['class_name'] == 'Adam'
    again = optimizers.deserialize(config)
    assert isinstance(again.inner_optimizer, Adam) and again.inner_optimizer.learning_rate == 0.01
    assert (again.loss_scale, again.dynamic_growth_steps) == (256.0, 10)
    param = _param()
    _step(optimizer, param, [256.0] * 3)
    names, values = optimizer.weight_names(), optimizer.get_weights()
    assert names[-2:] == ['LossScaleOptimizer/current_loss_scale:0',
                          'LossScaleOptimizer/good_steps:0']
    assert [float(values[-2]), int(values[-1])] == [256.0, 1]
    again.build([param])
    again.set_weights(values)
    assert (again.loss_scale, again.good_steps, again.iterations) == (256.0, 1, 1)
    np.testing.assert_array_equal(again.get_slot(param, 'm'), optimizer.get_slot(param, 'm'))


@pytest.mark.parametrize('arguments, message', [
    (dict(initial_scale=0.5), 'initial_scale'),
    (dict(initial_scale=np.inf), 'initial_scale'),
    (dict(dynamic_growth_steps=0), 'dynamic_growth_steps'),
    (dict(dynamic=False), 'needs initial_scale'),
    (dict(dynamic=False, initial_scale=2, dynamic_growth_steps=3), 'dynamic scaling'),
])
def test_bad_arguments_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        LossScaleOptimizer(SGD(), **arguments)


def test_a_loss_scale_optimizer_inside_another_is_refused():
    with pytest.raises(ValueError, match='already'):
        LossScaleOptimizer(LossScaleOptimizer(SGD()))
