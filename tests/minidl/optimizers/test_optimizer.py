"""The Optimizer base class: learning rate, clipping, state, build, config and errors."""

import numpy as np
import pytest

import minidl
from minidl import backend as K, optimizers
from minidl.compute import get_array_module
from minidl.optimizers import schedules
from minidl.optimizers.optimizer import BoundNumber
from tests.minidl.optimizers.reference import (
    adagrad_step, assert_trajectories_close, make_problem, make_tensors, run_minidl,
    run_reference, run_torch, sgd_step)

ALL = [
    lambda: optimizers.SGD(0.05),
    lambda: optimizers.SGD(0.05, momentum=0.9, nesterov=True),
    lambda: optimizers.RMSprop(0.01, momentum=0.5, centered=True),
    lambda: optimizers.Adagrad(0.1),
    lambda: optimizers.Adadelta(1.0),
    lambda: optimizers.Adam(0.01, amsgrad=True),
    lambda: optimizers.AdamW(0.01, weight_decay=0.1),
    lambda: optimizers.Nadam(0.01),
    lambda: optimizers.Adamax(0.01),
]
IDS = ['sgd', 'nesterov', 'rmsprop', 'adagrad', 'adadelta', 'adam', 'adamw', 'nadam', 'adamax']


def one_step(optimizer, param, grad):
    param.grad = minidl.Tensor(grad)
    optimizer.apply_gradients([param])


# ----- learning rate -----------------------------------------------------------------


def test_lr_is_the_legacy_alias_of_learning_rate():
    optimizer = optimizers.SGD(lr=0.5)
    assert optimizer.learning_rate == optimizer.lr == 0.5
    optimizer.lr = 0.25
    assert optimizer.learning_rate == 0.25
    optimizer.learning_rate = np.float32(0.125)
    assert optimizer.lr == 0.125 and isinstance(optimizer.lr, float)
    assert type(optimizer.get_config()['learning_rate']) in (float, BoundNumber)
    assert optimizers.Adam.from_config({'lr': 0.3}).learning_rate == 0.3


def test_keras_set_value_sets_the_learning_rate():
    # Keras 2's scripts and callbacks: K.set_value(model.optimizer.lr, new_rate).
    optimizer = optimizers.Adam(lr=0.01)
    K.set_value(optimizer.lr, np.float32(0.002))
    assert optimizer.learning_rate == pytest.approx(0.002) and K.get_value(optimizer.lr) == \
        pytest.approx(0.002)
    param = minidl.Tensor(np.ones(2, 'float32'), requires_grad=True)
    one_step(optimizer, param, np.ones(2, 'float32'))
    # Adam's first step moves each weight by the learning rate.
    np.testing.assert_allclose(param.numpy(), 1 - 0.002, rtol=1e-5)


@pytest.mark.parametrize('learning_rate', [0.1, 0.01])  # 0.01 is SGD's default
def test_learning_rate_and_lr_together_are_an_error(learning_rate):
    with pytest.raises(TypeError, match='learning_rate and its legacy alias lr'):
        optimizers.SGD(learning_rate=learning_rate, lr=0.5)


def test_learning_rate_set_mid_training_takes_effect_at_the_next_step():
    params, grads = make_problem()
    optimizer = optimizers.SGD(0.1, momentum=0.9)
    tensors = make_tensors(params)
    actual = run_minidl(optimizer, params, grads[:2], tensors)
    optimizer.learning_rate = 0.5 * optimizer.learning_rate
    actual += run_minidl(optimizer, params, grads[2:4], tensors)
    optimizer.learning_rate = schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    actual += run_minidl(optimizer, params, grads[4:], tensors)
    rates = [0.1, 0.1, 0.05, 0.05, 0.1 * 0.5 ** 4, 0.1 * 0.5 ** 5]
    expected = run_reference(sgd_step, params, grads, lambda iteration: rates[iteration],
                             momentum=0.9)
    assert_trajectories_close(actual, expected)


def test_a_schedule_is_evaluated_at_iterations():
    schedule = schedules.PiecewiseConstantDecay([1, 3], [0.3, 0.1, 0.02])
    optimizer = optimizers.SGD(schedule, momentum=0.5)
    params, grads = make_problem()
    actual = run_minidl(optimizer, params, grads)
    expected = run_reference(sgd_step, params, grads, schedule, momentum=0.5)
    assert_trajectories_close(actual, expected)
    assert optimizer.iterations == 6 and optimizer.current_learning_rate() == 0.02
    assert optimizer.learning_rate is schedule


def test_time_based_decay_divides_the_rate_by_one_plus_decay_times_iterations():
    params, grads = make_problem()
    actual = run_minidl(optimizers.SGD(0.2, decay=0.5), params, grads)
    expected = run_reference(sgd_step, params, grads, lambda iteration: 0.2 / (1 + 0.5 * iteration))
    assert_trajectories_close(actual, expected)


def test_adagrad_decay_matches_pytorch_lr_decay():
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=8)
    actual = run_minidl(optimizers.Adagrad(0.1, decay=0.3), params, grads)
    expected = run_torch(lambda ps: torch.optim.Adagrad(
        ps, lr=0.1, lr_decay=0.3, initial_accumulator_value=0.0, eps=1e-7), params, grads)
    assert_trajectories_close(actual, expected)
    assert_trajectories_close(actual, run_reference(
        adagrad_step, params, grads, lambda iteration: 0.1 / (1 + 0.3 * iteration)))


@pytest.mark.parametrize('value, error', [(-0.1, ValueError), (float('nan'), ValueError),
                                          ('0.1', TypeError), (None, TypeError)])
def test_bad_learning_rates_are_rejected(value, error):
    with pytest.raises(error, match='learning_rate'):
        optimizers.Adam(learning_rate=value)
    optimizer = optimizers.Adam()
    with pytest.raises(error, match='learning_rate'):
        optimizer.learning_rate = value
    assert optimizer.learning_rate == 0.001


# ----- clipping ------------------------------------------------------------------------


def clipped_step(grads, **clipping):
    """The update -lr * g' that SGD(lr=1) applies to parameters at zero."""
    params = [minidl.Tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    for param, grad in zip(params, grads):
        param.grad = minidl.Tensor(grad.copy())
    optimizers.SGD(1.0, **clipping).apply_gradients(params)
    for param, grad in zip(params, grads):
        np.testing.assert_array_equal(param.grad.numpy(), grad)  # gradients are left alone
    return [-param.numpy() for param in params]


GRADS = [np.array([3.0, 4.0], np.float32), np.array([[0.6], [-0.8]], np.float32)]  # norms 5 and 1


def test_clipvalue_clips_each_element():
    clipped = clipped_step(GRADS, clipvalue=0.7)
    np.testing.assert_allclose(clipped[0], [0.7, 0.7])
    np.testing.assert_allclose(clipped[1], [[0.6], [-0.7]])


def test_clipnorm_clips_each_gradient_on_its_own():
    clipped = clipped_step(GRADS, clipnorm=2.0)
    np.testing.assert_allclose(clipped[0], [1.2, 1.6], rtol=1e-6)
    np.testing.assert_allclose(clipped[1], [[0.6], [-0.8]], rtol=1e-6)  # norm 1 < 2: unchanged


def test_global_clipnorm_scales_all_gradients_together():
    clipped = clipped_step(GRADS, global_clipnorm=np.sqrt(26.0) / 2)  # the global norm is sqrt(26)
    np.testing.assert_allclose(clipped[0], [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(clipped[1], [[0.3], [-0.4]], rtol=1e-6)
    unchanged = clipped_step(GRADS, global_clipnorm=10.0)
    np.testing.assert_allclose(unchanged[0], GRADS[0])


def test_clipvalue_comes_before_clipnorm():
    # By value first: [3, 0.5] -> [1, 0.5], then to norm 1. By norm first would give
    # [3, 0.5] / 3.04, which clipping by value leaves alone.
    clipped = clipped_step([np.array([3.0, 0.5], np.float32)], clipvalue=1.0, clipnorm=1.0)
    np.testing.assert_allclose(clipped[0], np.array([1.0, 0.5]) / np.hypot(1.0, 0.5), rtol=1e-6)


def test_clipping_arguments_are_checked():
    with pytest.raises(ValueError, match='not both'):
        optimizers.SGD(clipnorm=1.0, global_clipnorm=1.0)
    for argument in ('clipnorm', 'clipvalue', 'global_clipnorm'):
        with pytest.raises(ValueError, match=argument):
            optimizers.SGD(**{argument: 0.0})
    config = optimizers.Adam(clipnorm=1.5, clipvalue=0.5).get_config()
    assert (config['clipnorm'] == 1.5 and config['clipvalue'] == 0.5
            and 'global_clipnorm' not in config)


# ----- state -----------------------------------------------------------------------------


@pytest.mark.parametrize('make', ALL, ids=IDS)
def test_get_and_set_weights_continue_bitwise_identically(make):
    params, grads = make_problem(steps=6)
    first = make()
    tensors = make_tensors(params)
    run_minidl(first, params, grads[:3], tensors)
    saved_params = [t.numpy().copy() for t in tensors]
    saved_state = first.get_weights()
    uninterrupted = run_minidl(first, params, grads[3:], tensors)

    second = make()
    resumed_tensors = make_tensors(saved_params)
    second.build(resumed_tensors)
    second.set_weights(saved_state)
    assert second.iterations == 3
    resumed = run_minidl(second, saved_params, grads[3:], resumed_tensors)
    for a, b in zip(uninterrupted[-1], resumed[-1]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('make', ALL, ids=IDS)
def test_updates_are_deterministic_and_in_place(make):
    params, grads = make_problem()
    tensors = make_tensors(params)
    arrays = [t.data for t in tensors]
    optimizer = make()
    first = run_minidl(optimizer, params, grads, tensors)
    assert all(t.data is a for t, a in zip(tensors, arrays))  # never rebound
    second = run_minidl(make(), params, grads)
    for a, b in zip(first[-1], second[-1]):
        np.testing.assert_array_equal(a, b)
    assert optimizer.iterations == len(grads)


@pytest.mark.parametrize('make', ALL, ids=IDS)
def test_large_parameters_updated_in_pieces_give_the_same_bits(make):
    params, grads = make_problem()
    whole = make()
    whole.elementwise = False
    for a, b in zip(run_minidl(make(), params, grads)[-1], run_minidl(whole, params, grads)[-1]):
        np.testing.assert_array_equal(a, b)


def test_get_weights_returns_copies_with_an_int64_iteration_count():
    params, grads = make_problem()
    optimizer = optimizers.Adam()
    run_minidl(optimizer, params, grads[:2])
    weights = optimizer.get_weights()
    assert weights[0].dtype == np.int64 and weights[0].shape == () and int(weights[0]) == 2
    weights[1][...] = 123.0
    assert not np.any(optimizer.get_weights()[1] == 123.0)
    assert len(weights) == len(optimizer.weight_names()) == 1 + 2 * len(params)


def test_set_weights_checks_count_and_shapes_before_changing_anything():
    params, grads = make_problem()
    optimizer = optimizers.Adam()
    with pytest.raises(ValueError, match='call build'):
        optimizer.set_weights([np.array(1)] * 7)
    run_minidl(optimizer, params, grads[:1])
    weights = optimizer.get_weights()
    with pytest.raises(ValueError,
                       match=r'expected 7 arrays \(Adam/iter:0, Adam/layer_0/kernel/m:0'):
        optimizer.set_weights(weights[:-1])
    bad = [np.array(5)] + weights[1:]
    bad[4] = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r'Adam/layer_0/kernel/v:0 has shape \(3, 4\).*\(4, 3\)'):
        optimizer.set_weights(bad)
    assert optimizer.iterations == 1


def test_build_is_idempotent_and_keeps_the_slots_of_other_parameter_lists():
    params, _ = make_problem()
    tensors = make_tensors(params)
    optimizer = optimizers.SGD(momentum=0.9)
    optimizer.build(tensors)
    slot = optimizer.get_slot(tensors[0], 'momentum')
    optimizer.build(list(tensors))
    assert optimizer.get_slot(tensors[0], 'momentum') is slot and optimizer.built
    assert slot.dtype == np.float32 and slot.shape == (3, 4) and not slot.any()
    # Another list (another model's weights, as Keras 2 allows): its own slots,
    # the first list's kept; get_weights describes the latest list.
    others = make_tensors(params)
    assert not optimizer.has_slots_for(others)
    optimizer.build(tensors[:2] + others)
    assert optimizer.get_slot(tensors[0], 'momentum') is slot
    assert optimizer.get_slot(others[0], 'momentum') is not slot
    assert optimizer.has_slots_for(tensors) and optimizer.has_slots_for(others)
    assert len(optimizer.get_weights()) == 1 + 2 + len(others)
    with pytest.raises(TypeError, match='floating Tensor'):
        optimizers.SGD().build([np.zeros(3)])


def test_parameters_without_gradients_are_skipped():
    params, grads = make_problem()
    tensors = make_tensors(params)
    optimizer = optimizers.Adam(0.1)
    tensors[0].grad = None
    tensors[1].grad = minidl.Tensor(grads[0][1])
    tensors[2].grad = None
    optimizer.apply_gradients(tensors)
    np.testing.assert_array_equal(tensors[0].numpy(), params[0])
    assert not optimizer.get_slot(tensors[0], 'm').any()
    assert not np.allclose(tensors[1].numpy(), params[1])
    assert optimizer.iterations == 1


def test_gradient_errors_are_raised_before_any_change():
    params, grads = make_problem()
    tensors = make_tensors(params)
    optimizer = optimizers.SGD(0.1)
    for tensor in tensors:
        tensor.grad = None
    with pytest.raises(ValueError, match='no gradient for any of the parameters'):
        optimizer.apply_gradients(tensors)
    tensors[0].grad = minidl.Tensor(grads[0][0])
    tensors[1].grad = minidl.Tensor(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"'layer_1/kernel' has shape \(4,\)"):
        optimizer.apply_gradients(tensors)
    np.testing.assert_array_equal(tensors[0].numpy(), params[0])
    assert optimizer.iterations == 0


def test_to_cpu_keeps_the_state_and_strategy_is_none():
    params, grads = make_problem()
    optimizer = optimizers.Adam()
    run_minidl(optimizer, params, grads[:1])
    before = optimizer.get_weights()
    assert optimizer.to('cpu') is optimizer
    for a, b in zip(before, optimizer.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert optimizers.Optimizer.strategy is None and optimizer.strategy is None


# ----- config ----------------------------------------------------------------------------


KERAS_KEYS = {
    optimizers.SGD: {'decay', 'momentum', 'nesterov'},
    optimizers.RMSprop: {'decay', 'rho', 'momentum', 'epsilon', 'centered'},
    optimizers.Adagrad: {'decay', 'initial_accumulator_value', 'epsilon'},
    optimizers.Adadelta: {'decay', 'rho', 'epsilon'},
    optimizers.Adam: {'decay', 'beta_1', 'beta_2', 'epsilon', 'amsgrad'},
    optimizers.AdamW: {'decay', 'weight_decay', 'beta_1', 'beta_2', 'epsilon', 'amsgrad'},
    optimizers.Adamax: {'decay', 'beta_1', 'beta_2', 'epsilon'},
    optimizers.Nadam: {'beta_1', 'beta_2', 'epsilon', 'schedule_decay'},
}


@pytest.mark.parametrize('cls', KERAS_KEYS, ids=lambda cls: cls.__name__)
def test_configs_have_kerass_keys(cls):
    config = cls().get_config()
    assert set(config) == {'name', 'learning_rate'} | KERAS_KEYS[cls]
    assert config['name'] == cls.__name__


@pytest.mark.parametrize('make', ALL, ids=IDS)
def test_configs_round_trip_with_schedules_and_clipping(make):
    original = make()
    config = {**original.get_config(), 'name': 'custom', 'global_clipnorm': 3.0,
              'learning_rate': schedules.serialize(schedules.CosineDecay(0.01, 4, alpha=0.1))}
    optimizer = type(original).from_config(config)
    assert optimizer.get_config() == config
    rebuilt = optimizers.deserialize(optimizers.serialize(optimizer))
    assert rebuilt.get_config() == config and rebuilt.name == 'custom'
    params, grads = make_problem()
    for a, b in zip(run_minidl(optimizer, params, grads)[-1],
                    run_minidl(rebuilt, params, grads)[-1]):
        np.testing.assert_array_equal(a, b)


def test_unknown_keyword_arguments_are_a_type_error():
    with pytest.raises(TypeError, match='momentom'):
        optimizers.SGD(momentom=0.9)
    with pytest.raises(TypeError, match='amsgrad'):
        optimizers.RMSprop(amsgrad=True)


# ----- writing an optimizer --------------------------------------------------------------


class SignMomentum(optimizers.Optimizer):
    """A user optimizer written against the documented contract."""

    slot_names = ('m',)

    def __init__(self, learning_rate=0.1, beta=0.5, name='SignMomentum', **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        self.beta = beta

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        slots['m'] *= self.beta
        slots['m'] += grad
        param -= lr * xp.sign(slots['m'])

    def get_config(self):
        return {**super().get_config(), 'beta': self.beta}


def test_a_subclass_needs_only_slot_names_update_and_get_config():
    param = minidl.Tensor(np.zeros(3, np.float32), requires_grad=True)
    param.name = 'w:0'
    optimizer = SignMomentum(clipvalue=10.0)
    one_step(optimizer, param, np.array([1.0, -2.0, 0.0], np.float32))
    one_step(optimizer, param, np.array([-3.0, 1.0, 0.5], np.float32))
    # m: [1, -2, 0] then [-2.5, 0, 0.5]
    np.testing.assert_allclose(param.numpy(), [0.0, 0.1, -0.1])
    assert optimizer.weight_names() == ['SignMomentum/iter:0', 'SignMomentum/w/m:0']
    rebuilt = optimizers.deserialize(optimizers.serialize(optimizer),
                                     custom_objects={'SignMomentum': SignMomentum})
    assert rebuilt.get_config() == optimizer.get_config()
