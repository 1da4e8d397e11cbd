"""Adam (with AMSGrad), AdamW, Nadam and Adamax, against numpy and PyTorch."""

import numpy as np
import pytest

import minidl
from minidl import optimizers
from tests.minidl.optimizers.reference import (
    adam_step, adamax_step, assert_trajectories_close, make_problem, nadam_step, run_minidl,
    run_reference, run_torch)

# epsilon=0.5 makes Keras's "epsilon hat" placement visible.
CASES = [{}, {'amsgrad': True}, {'epsilon': 0.5}, {'beta_1': 0.5, 'beta_2': 0.9, 'amsgrad': True}]


@pytest.mark.parametrize('hyper', CASES)
def test_adam_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.Adam(learning_rate=0.01, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(adam_step, params, grads, 0.01, **hyper))


def test_adam_defaults_and_slot_order():
    optimizer = optimizers.Adam(amsgrad=True)
    assert (optimizer.learning_rate, optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == \
        (0.001, 0.9, 0.999, 1e-07)
    params, grads = make_problem()
    assert_trajectories_close(run_minidl(optimizer, params[:2], [g[:2] for g in grads]),
                              run_reference(adam_step, params[:2], [g[:2] for g in grads], 0.001,
                                            amsgrad=True))
    assert optimizer.weight_names() == [
        'Adam/iter:0', 'Adam/layer_0/kernel/m:0', 'Adam/layer_1/kernel/m:0',
        'Adam/layer_0/kernel/v:0', 'Adam/layer_1/kernel/v:0',
        'Adam/layer_0/kernel/vhat:0', 'Adam/layer_1/kernel/vhat:0']


@pytest.mark.parametrize('amsgrad', [False, True])
def test_adam_matches_pytorch_with_a_negligible_epsilon(amsgrad):
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=5)
    actual = run_minidl(optimizers.Adam(0.01, epsilon=1e-12, amsgrad=amsgrad), params, grads)
    expected = run_torch(lambda ps: torch.optim.Adam(ps, lr=0.01, eps=1e-12, amsgrad=amsgrad),
                         params, grads)
    assert_trajectories_close(actual, expected)


@pytest.mark.parametrize('hyper', [{'weight_decay': 0.1}, {'weight_decay': 0.5, 'amsgrad': True}])
def test_adamw_follows_the_decoupled_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.AdamW(learning_rate=0.05, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(adam_step, params, grads, 0.05, **hyper))


def test_adamw_default_weight_decay_and_pytorch():
    torch = pytest.importorskip('torch')
    assert optimizers.AdamW().weight_decay == 0.004
    params, grads = make_problem(seed=6)
    actual = run_minidl(optimizers.AdamW(0.05, weight_decay=0.3, epsilon=1e-12), params, grads)
    expected = run_torch(lambda ps: torch.optim.AdamW(ps, lr=0.05, weight_decay=0.3, eps=1e-12),
                         params, grads)
    assert_trajectories_close(actual, expected)


@pytest.mark.parametrize('hyper', [{}, {'epsilon': 0.5, 'beta_1': 0.8}, {'schedule_decay': 0.1}])
def test_nadam_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.Nadam(learning_rate=0.01, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(nadam_step, params, grads, 0.01, **hyper))


def test_nadam_matches_pytorch_and_saves_its_momentum_cache():
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=7)
    optimizer = optimizers.Nadam(0.01)
    actual = run_minidl(optimizer, params, grads)
    expected = run_torch(lambda ps: torch.optim.NAdam(ps, lr=0.01, eps=1e-7, momentum_decay=0.004),
                         params, grads)
    assert_trajectories_close(actual, expected)
    mu = [0.9 * (1 - 0.5 * 0.96 ** (0.004 * t)) for t in range(1, len(grads) + 1)]
    assert optimizer.weight_names()[1] == 'Nadam/momentum_cache:0'
    assert optimizer.get_weights()[1] == pytest.approx(np.prod(mu), rel=1e-12)


def test_nadam_defaults_and_config_are_kerass():
    optimizer = optimizers.Nadam()
    assert (optimizer.learning_rate, optimizer.schedule_decay, optimizer.epsilon) == \
        (0.002, 0.004, 1e-07)
    config = optimizer.get_config()
    assert config['schedule_decay'] == 0.004 and 'decay' not in config
    assert optimizers.Nadam.from_config({**config, 'schedule_decay': 0.01}).schedule_decay == 0.01
    # tf.keras saves the schedule decay as 'decay'.
    del config['schedule_decay']
    assert optimizers.Nadam.from_config({**config, 'decay': 0.02}).schedule_decay == 0.02
    with pytest.raises(TypeError, match='schedule_decay and decay'):
        optimizers.Nadam(schedule_decay=0.1, decay=0.1)


@pytest.mark.parametrize('hyper', [{}, {'epsilon': 0.5, 'beta_1': 0.5}, {'beta_2': 0.5}])
def test_adamax_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.Adamax(learning_rate=0.01, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(adamax_step, params, grads, 0.01, **hyper))


def test_adamax_defaults_config_and_slot_order():
    optimizer = optimizers.Adamax()
    assert (optimizer.learning_rate, optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == \
        (0.002, 0.9, 0.999, 1e-07)
    params, grads = make_problem()
    run_minidl(optimizer, params[:1], [g[:1] for g in grads[:1]])
    assert optimizer.weight_names() == [
        'Adamax/iter:0', 'Adamax/layer_0/kernel/m:0', 'Adamax/layer_0/kernel/u:0']
    assert optimizers.Adamax(lr=0.5).get_config()['learning_rate'] == 0.5


def test_adamax_matches_pytorch_with_a_negligible_epsilon():
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=9)
    actual = run_minidl(optimizers.Adamax(0.01, epsilon=1e-12), params, grads)
    expected = run_torch(lambda ps: torch.optim.Adamax(ps, lr=0.01, eps=1e-12), params, grads)
    assert_trajectories_close(actual, expected)


def test_float64_parameters_keep_float64_slots_and_precision():
    params, grads = make_problem()
    tensors = [minidl.Tensor(p.astype(np.float64), dtype='float64', requires_grad=True)
               for p in params]
    optimizer = optimizers.Adam(0.01)
    actual = run_minidl(optimizer, params, grads, tensors=tensors)
    assert all(w.dtype == np.float64 for w in optimizer.get_weights()[1:])
    assert_trajectories_close(actual, run_reference(adam_step, params, grads, 0.01),
                              rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize('argument', ['beta_1', 'beta_2'])
def test_betas_must_be_below_one(argument):
    with pytest.raises(ValueError, match=argument):
        optimizers.Adam(**{argument: 1.0})
