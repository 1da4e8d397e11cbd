"""Adagrad and Adadelta, against numpy and PyTorch."""

import numpy as np
import pytest

from minidl import optimizers
from tests.minidl.optimizers.reference import (
    adadelta_step, adagrad_step, assert_trajectories_close, make_problem, run_minidl,
    run_reference, run_torch)


@pytest.mark.parametrize('hyper', [{}, {'initial_accumulator_value': 0.5, 'epsilon': 0.3},
                                   {'initial_accumulator_value': 0.1}])
def test_adagrad_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.Adagrad(learning_rate=0.1, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(adagrad_step, params, grads, 0.1, **hyper))


def test_adagrad_accumulator_starts_at_the_initial_value():
    params, grads = make_problem()
    optimizer = optimizers.Adagrad(initial_accumulator_value=0.25)
    assert (optimizer.learning_rate, optimizer.epsilon) == (0.01, 1e-07)
    run_minidl(optimizer, params, grads[:1])
    np.testing.assert_allclose(optimizer.get_weights()[1], 0.25 + grads[0][0] ** 2, rtol=1e-6)


def test_adagrad_defaults_are_kerass():
    # Keras 2: lr 0.01, accumulators from zero (tf.keras: 0.001 and 0.1).
    optimizer = optimizers.Adagrad()
    assert (optimizer.learning_rate, optimizer.initial_accumulator_value) == (0.01, 0.0)
    params, grads = make_problem()
    assert_trajectories_close(run_minidl(optimizer, params[:2], [g[:2] for g in grads]),
                              run_reference(adagrad_step, params[:2], [g[:2] for g in grads], 0.01))


def test_adagrad_matches_pytorch():
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=3)
    actual = run_minidl(optimizers.Adagrad(0.1, initial_accumulator_value=0.2), params, grads)
    expected = run_torch(lambda ps: torch.optim.Adagrad(
        ps, lr=0.1, initial_accumulator_value=0.2, eps=1e-7), params, grads)
    assert_trajectories_close(actual, expected)


def test_negative_initial_accumulator_is_rejected():
    with pytest.raises(ValueError, match='initial_accumulator_value'):
        optimizers.Adagrad(initial_accumulator_value=-0.1)


@pytest.mark.parametrize('hyper', [{}, {'rho': 0.5, 'epsilon': 0.01}])
def test_adadelta_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.Adadelta(learning_rate=1.0, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(adadelta_step, params, grads, 1.0, **hyper))


def test_adadelta_defaults_and_slot_order():
    optimizer = optimizers.Adadelta()
    assert (optimizer.learning_rate, optimizer.rho, optimizer.epsilon) == (1.0, 0.95, 1e-07)
    params, grads = make_problem()
    assert_trajectories_close(run_minidl(optimizer, params[:2], [g[:2] for g in grads]),
                              run_reference(adadelta_step, params[:2], [g[:2] for g in grads], 1.0))
    assert optimizer.weight_names()[1:] == [
        'Adadelta/layer_0/kernel/accum_grad:0', 'Adadelta/layer_1/kernel/accum_grad:0',
        'Adadelta/layer_0/kernel/accum_var:0', 'Adadelta/layer_1/kernel/accum_var:0']


def test_adadelta_matches_pytorch():
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=4)
    actual = run_minidl(optimizers.Adadelta(1.0, rho=0.9, epsilon=1e-6), params, grads)
    expected = run_torch(lambda ps: torch.optim.Adadelta(ps, lr=1.0, rho=0.9, eps=1e-6),
                         params, grads)
    assert_trajectories_close(actual, expected)
