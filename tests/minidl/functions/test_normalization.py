import numpy as np
import pytest

from minidl import Tensor
from minidl.functions.normalization import (
    BatchNorm, BatchNormInference, LayerNorm, batch_norm, layer_norm)
from tests.gradcases import GradCase, random, run_gradcheck

torch = pytest.importorskip('torch')


def _train(x, gamma, beta, axis=-1):
    # Fresh running statistics per call, on x's device: gradcheck runs the forward many
    # times, and the GPU tests run these cases on CuPy arrays.
    channels = x.shape[axis]
    return batch_norm(x, gamma, beta, x.xp.zeros(channels), x.xp.ones(channels), True, axis=axis)


GRADCHECK_CASES = [
    GradCase(BatchNorm, _train, [random(2, 3, 3, 4), random(4, seed=1), random(4, seed=2)],
             'channels_last'),
    GradCase(BatchNorm, lambda x, g, b: _train(x, g, b, axis=1),
             [random(2, 3, 3, 2, seed=3), random(3, seed=4), random(3, seed=5)], 'channels_first'),
    GradCase(BatchNorm, _train, [random(5, 3, seed=6), random(3, seed=7), random(3, seed=8)],
             '2d'),
    GradCase(BatchNormInference,
             lambda x, g, b, m, v: batch_norm(x, g, b, m, v, False, axis=1),
             [random(2, 3, 2, 2, seed=9), random(3, seed=10), random(3, seed=11),
              random(3, seed=12), random(3, seed=13, low=0.5, high=2.0)]),
    GradCase(LayerNorm, lambda x, g, b: layer_norm(x, g, b),
             [random(3, 2, 5, seed=14), random(5, seed=15), random(5, seed=16)], 'last'),
    GradCase(LayerNorm, lambda x, g, b: layer_norm(x, g, b, axis=(1, 3)),
             [random(2, 3, 2, 2, seed=17), random(3, 2, seed=18), random(3, 2, seed=19)], 'axes'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def _float32(*shape, seed=0, low=None, high=None):
    return random(*shape, seed=seed, low=low, high=high).astype(np.float32)


def _close(actual, expected, rtol=1e-4, atol=1e-5):
    actual = actual.numpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else expected
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale)


# (shape, channel axis): 2-D, 4-D channels_last, 4-D channels_first, few and many channels,
# and sizes whose channels-last rows cannot be widened.
LAYOUTS = [((32, 6), -1), ((7, 5), 1), ((8, 6, 6, 16), -1), ((8, 16, 6, 6), 1),
           ((3, 5, 5, 3), -1), ((4, 64, 3, 3), 1), ((2, 3, 3, 64), 3)]


def _to_torch_layout(array, axis):
    """numpy array with channels at ``axis`` -> torch tensor with channels at axis 1."""
    return torch.tensor(np.ascontiguousarray(np.moveaxis(array, axis, 1)))


@pytest.mark.parametrize('training', [True, False], ids=['train', 'eval'])
@pytest.mark.parametrize('shape,axis', LAYOUTS, ids=str)
def test_batch_norm_matches_torch(shape, axis, training):
    channels = shape[axis]
    x = _float32(*shape, seed=1) * 3 + 2
    gamma, beta = _float32(channels, seed=2), _float32(channels, seed=3)
    mean, var = _float32(channels, seed=4), _float32(channels, seed=5, low=0.5, high=2)
    grad = _float32(*shape, seed=6)
    momentum, epsilon = 0.9, 1e-3

    tx, tg, tb = (_to_torch_layout(x, axis).requires_grad_(), torch.tensor(gamma).requires_grad_(),
                  torch.tensor(beta).requires_grad_())
    t_mean, t_var = torch.tensor(mean), torch.tensor(var)
    ty = torch.nn.functional.batch_norm(tx, t_mean, t_var, tg, tb, training, 1 - momentum, epsilon)
    ty.backward(_to_torch_layout(grad, axis))

    mx, mg, mb = (Tensor(x, requires_grad=True), Tensor(gamma, requires_grad=True),
                  Tensor(beta, requires_grad=True))
    running_mean, running_var = Tensor(mean), Tensor(var)
    y = batch_norm(mx, mg, mb, running_mean, running_var, training, momentum, epsilon, axis=axis)
    y.backward(grad)

    assert y.dtype == np.float32 and mx.grad.dtype == np.float32
    _close(y, np.moveaxis(ty.detach().numpy(), 1, axis))
    _close(mx.grad, np.moveaxis(tx.grad.numpy(), 1, axis), atol=1e-4)
    _close(mg.grad, tg.grad, atol=1e-4)
    _close(mb.grad, tb.grad)
    _close(running_mean, t_mean)
    _close(running_var, t_var)


def test_batch_norm_without_scale_and_offset():
    x, grad = _float32(6, 4, 3, 3, seed=1), _float32(6, 4, 3, 3, seed=2)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.batch_norm(tx, None, None, None, None, True, 0.1, 1e-3)
    ty.backward(torch.tensor(grad))
    mx = Tensor(x, requires_grad=True)
    y = batch_norm(mx, None, None, None, None, True, axis=1)
    y.backward(grad)
    _close(y, ty)
    _close(mx.grad, tx.grad, atol=1e-4)


def test_batch_norm_updates_running_statistics_in_place():
    x = _float32(10, 3, seed=1)
    running_mean, running_var = np.zeros(3, np.float32), np.ones(3, np.float32)
    mean_id = id(running_mean)
    batch_norm(x, None, None, running_mean, running_var, True, momentum=0.5)
    assert id(running_mean) == mean_id and running_mean.dtype == np.float32
    np.testing.assert_allclose(running_mean, 0.5 * x.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(running_var, 0.5 + 0.5 * x.var(0, ddof=1), rtol=1e-5)
    # Inference mode leaves them alone.
    before = running_mean.copy()
    batch_norm(x, None, None, running_mean, running_var, False)
    np.testing.assert_array_equal(running_mean, before)


def test_batch_norm_single_value_per_channel_uses_biased_variance():
    running_var = np.ones(2, np.float32)
    y = batch_norm(_float32(1, 2), None, None, np.zeros(2, np.float32), running_var, True,
                   momentum=0.5)
    np.testing.assert_array_equal(y.numpy(), np.zeros((1, 2), np.float32))
    np.testing.assert_array_equal(running_var, [0.5, 0.5])


def test_batch_norm_is_deterministic():
    x = _float32(16, 8, 8, 16, seed=3)
    first = batch_norm(x, None, None, None, None, True).numpy()
    second = batch_norm(x.copy(), None, None, None, None, True).numpy()
    assert first.tobytes() == second.tobytes()


def test_batch_norm_rejects_bad_arguments():
    x = np.zeros((4, 3, 2, 2), np.float32)
    with pytest.raises(ValueError, match=r'gamma has shape \(2,\), expected \(3,\)'):
        batch_norm(x, np.ones(2), None, None, None, True, axis=1)
    with pytest.raises(ValueError, match=r'running_var has shape \(2,\), expected \(3,\)'):
        batch_norm(x, None, None, np.zeros(3), np.ones(2), True, axis=1)
    with pytest.raises(ValueError, match='axis 4 is out of range'):
        batch_norm(x, None, None, None, None, True, axis=4)
    with pytest.raises(ValueError, match='needs running_mean and running_var'):
        batch_norm(x, None, None, None, None, False, axis=1)
    with pytest.raises(ValueError, match='at least 2 dimensions'):
        batch_norm(np.zeros(3, np.float32), None, None, None, None, True)
    with pytest.raises(TypeError, match='running_mean must be a Tensor or an array'):
        batch_norm(x, None, None, [0.0, 0.0, 0.0], np.ones(3), True, axis=1)
    running_mean = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match='empty batch'):
        batch_norm(np.zeros((0, 3), np.float32), None, None, running_mean, np.ones(3), True)
    np.testing.assert_array_equal(running_mean, 0)


@pytest.mark.parametrize('shape,axis', [((4, 6, 10), -1), ((4, 3, 5, 6), (-2, -1)),
                                        ((4, 7), (0, 1))], ids=str)
def test_layer_norm_matches_torch(shape, axis):
    axes = axis if isinstance(axis, tuple) else (axis,)
    normalized_shape = tuple(shape[a] for a in axes)
    x = _float32(*shape, seed=1) * 2 + 1
    gamma, beta = _float32(*normalized_shape, seed=2), _float32(*normalized_shape, seed=3)
    grad = _float32(*shape, seed=4)
    tx, tg, tb = (torch.tensor(x, requires_grad=True), torch.tensor(gamma, requires_grad=True),
                  torch.tensor(beta, requires_grad=True))
    ty = torch.nn.functional.layer_norm(tx, normalized_shape, tg, tb, 1e-3)
    ty.backward(torch.tensor(grad))
    mx, mg, mb = (Tensor(x, requires_grad=True), Tensor(gamma, requires_grad=True),
                  Tensor(beta, requires_grad=True))
    y = layer_norm(mx, mg, mb, axis=axis)
    y.backward(grad)
    assert y.dtype == np.float32
    _close(y, ty)
    _close(mx.grad, tx.grad, atol=1e-4)
    _close(mg.grad, tg.grad, atol=1e-4)
    _close(mb.grad, tb.grad)


def test_layer_norm_over_inner_axis_matches_torch_on_moved_axis():
    x, grad = _float32(3, 5, 4, seed=1), _float32(3, 5, 4, seed=2)
    gamma = _float32(5, seed=3)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(gamma, requires_grad=True)
    ty = torch.nn.functional.layer_norm(tx.transpose(1, 2), (5,), tg, None, 1e-3).transpose(1, 2)
    ty.backward(torch.tensor(grad))
    mx, mg = Tensor(x, requires_grad=True), Tensor(gamma, requires_grad=True)
    y = layer_norm(mx, mg, None, axis=1)
    y.backward(grad)
    _close(y, ty)
    _close(mx.grad, tx.grad, atol=1e-4)
    _close(mg.grad, tg.grad, atol=1e-4)


def test_layer_norm_rejects_bad_arguments():
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r'gamma has shape \(3,\), expected \(4,\)'):
        layer_norm(x, np.ones(3), None)
    with pytest.raises(ValueError, match=r'beta has shape \(4,\), expected \(3, 4\)'):
        layer_norm(x, None, np.ones(4), axis=(1, 2))
    with pytest.raises(ValueError, match='axis 3 is out of range'):
        layer_norm(x, None, None, axis=3)
