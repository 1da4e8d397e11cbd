"""RMSprop: plain, centered and with momentum (epsilon inside the root), against numpy and
PyTorch."""

import pytest

from minidl import optimizers
from tests.minidl.optimizers.reference import (
    assert_trajectories_close, make_problem, rmsprop_step, run_minidl, run_reference, run_torch)

# A large epsilon makes its place (outside or inside the square root) visible.
CASES = [{}, {'centered': True}, {'momentum': 0.8}, {'momentum': 0.8, 'centered': True},
         {'epsilon': 0.5}, {'epsilon': 0.5, 'momentum': 0.8}, {'rho': 0.5, 'centered': True}]


@pytest.mark.parametrize('hyper', CASES)
def test_rmsprop_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.RMSprop(learning_rate=0.01, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(rmsprop_step, params, grads, 0.01, **hyper))


def test_rmsprop_defaults_are_keras_defaults():
    optimizer = optimizers.RMSprop()
    assert (optimizer.learning_rate, optimizer.rho, optimizer.momentum, optimizer.epsilon,
            optimizer.centered) == (0.001, 0.9, 0.0, 1e-07, False)
    params, grads = make_problem()
    assert_trajectories_close(run_minidl(optimizer, params, grads),
                              run_reference(rmsprop_step, params, grads, 0.001))


@pytest.mark.parametrize('hyper', [{}, {'centered': True}, {'momentum': 0.8},
                                   {'momentum': 0.8, 'centered': True}])
def test_rmsprop_matches_pytorch(hyper):
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=2)
    # A tiny epsilon: PyTorch keeps it outside the root even with momentum.
    actual = run_minidl(optimizers.RMSprop(0.01, rho=0.9, epsilon=1e-20, **hyper), params, grads)
    expected = run_torch(lambda ps: torch.optim.RMSprop(ps, lr=0.01, alpha=0.9, eps=1e-20, **hyper),
                         params, grads)
    assert_trajectories_close(actual, expected)


def test_slot_order_is_rms_momentum_mg():
    params, grads = make_problem()
    optimizer = optimizers.RMSprop(momentum=0.5, centered=True)
    run_minidl(optimizer, params[:1], [g[:1] for g in grads[:1]])
    assert optimizer.weight_names() == [
        'RMSprop/iter:0', 'RMSprop/layer_0/kernel/rms:0', 'RMSprop/layer_0/kernel/momentum:0',
        'RMSprop/layer_0/kernel/mg:0']
