"""SGD: Keras 2's (Nesterov) momentum form, against numpy and PyTorch."""

import numpy as np
import pytest

from minidl import optimizers
from tests.minidl.optimizers.reference import (
    assert_trajectories_close, make_problem, run_minidl, run_reference, run_torch, sgd_step)

CASES = [{}, {'momentum': 0.9}, {'momentum': 0.9, 'nesterov': True},
         {'momentum': 0.5, 'nesterov': True}]


@pytest.mark.parametrize('hyper', CASES)
def test_sgd_follows_the_keras_formula(hyper):
    params, grads = make_problem()
    actual = run_minidl(optimizers.SGD(learning_rate=0.1, **hyper), params, grads)
    assert_trajectories_close(actual, run_reference(sgd_step, params, grads, 0.1, **hyper))


def test_sgd_defaults_are_keras_defaults():
    params, grads = make_problem()
    optimizer = optimizers.SGD()
    assert (optimizer.learning_rate, optimizer.momentum, optimizer.nesterov) == (0.01, 0.0, False)
    assert_trajectories_close(run_minidl(optimizer, params, grads),
                              run_reference(sgd_step, params, grads, 0.01))


@pytest.mark.parametrize('hyper', CASES)
def test_sgd_matches_pytorch(hyper):
    torch = pytest.importorskip('torch')
    params, grads = make_problem(seed=1)
    actual = run_minidl(optimizers.SGD(learning_rate=0.05, **hyper), params, grads)
    expected = run_torch(lambda ps: torch.optim.SGD(ps, lr=0.05, **hyper), params, grads)
    assert_trajectories_close(actual, expected)


def test_momentum_zero_keeps_no_slot_and_momentum_keeps_one_per_parameter():
    params, grads = make_problem()
    plain = optimizers.SGD()
    run_minidl(plain, params, grads[:1])
    assert plain.weight_names() == ['SGD/iter:0']
    with_momentum = optimizers.SGD(momentum=0.9)
    run_minidl(with_momentum, params, grads[:1])
    assert with_momentum.weight_names() == [
        'SGD/iter:0', 'SGD/layer_0/kernel/momentum:0', 'SGD/layer_1/kernel/momentum:0',
        'SGD/layer_2/kernel/momentum:0']
    # After one step from zero velocity, v = -lr * g.
    np.testing.assert_allclose(with_momentum.get_weights()[1], -0.01 * grads[0][0], rtol=1e-6)


@pytest.mark.parametrize('momentum', [-0.1, 1.5])
def test_momentum_outside_zero_one_is_rejected(momentum):
    with pytest.raises(ValueError, match='momentum'):
        optimizers.SGD(momentum=momentum)
