import math
import warnings

import numpy as np
import pytest

from minidl.compute.relu import ZERO_TILE
from minidl.functions import activation as A
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

torch = pytest.importorskip('torch')
F = torch.nn.functional


def away_from(values, kinks, margin=1e-2):
    """``values`` with every element at least ``margin`` from each kink (finite differences)."""
    values = np.array(values, dtype=np.float64)
    for kink in kinks:
        close = np.abs(values - kink) < margin
        values[close] = kink + np.where(values[close] >= kink, margin, -margin)
    return values


GRADCHECK_CASES = [
    GradCase(A.ReLU, A.relu, [away_from(random(4, 5), [0])]),
    GradCase(A.LeakyReLU, A.leaky_relu, [away_from(random(4, 5), [0])]),
    GradCase(A.LeakyReLU, lambda x: A.leaky_relu(x, alpha=1.5), [away_from(random(3, 4), [0])],
             name='alpha-above-one'),
    GradCase(A.ELU, lambda x: A.elu(x, alpha=0.7), [away_from(random(4, 5), [0])]),
    GradCase(A.ELU, A.selu, [away_from(random(4, 5, seed=1), [0])], name='selu'),
    GradCase(A.Sigmoid, A.sigmoid, [random(4, 5) * 3]),
    GradCase(A.HardSigmoid, A.hard_sigmoid,
             [away_from(random(4, 5, low=-4, high=4), [-2.5, 2.5])]),
    GradCase(A.Tanh, A.tanh, [random(4, 5)]),
    GradCase(A.Softmax, A.softmax, [random(3, 5)]),
    GradCase(A.Softmax, lambda x: A.softmax(x, axis=0), [random(4, 2, 3)], name='axis0'),
    GradCase(A.LogSoftmax, A.log_softmax, [random(3, 5)]),
    GradCase(A.LogSoftmax, lambda x: A.log_softmax(x, axis=1), [random(2, 4, 3)], name='axis1'),
    GradCase(A.Softplus, A.softplus, [random(4, 5) * 5]),
    GradCase(A.Softsign, A.softsign, [random(4, 5) * 3]),
    GradCase(A.GELU, A.gelu, [random(5, 6) * 3]),
    GradCase(A.GELU, lambda x: A.gelu(x, approximate=True), [random(5, 6) * 3],
             name='approximate'),
    # numpy turns 0-d results into scalars, which out= arguments reject.
    GradCase(A.Sigmoid, A.sigmoid, [np.array(0.7)], name='0-d'),
    GradCase(A.HardSigmoid, A.hard_sigmoid, [np.array(0.7)], name='0-d'),
    GradCase(A.Tanh, A.tanh, [np.array(0.7)], name='0-d'),
    GradCase(A.Softplus, A.softplus, [np.array(0.7)], name='0-d'),
    GradCase(A.GELU, A.gelu, [np.array(-0.7)], name='0-d'),
    GradCase(A.GELU, lambda x: A.gelu(x, approximate=True), [np.array(-0.7)],
             name='approximate-0-d'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def hard_sigmoid_torch(x):
    return torch.clamp(0.2 * x + 0.5, 0, 1)


# (name, minidl function, torch function), each taking only the input.
AGAINST_TORCH = [
    ('relu', A.relu, F.relu),
    ('leaky_relu', A.leaky_relu, lambda x: F.leaky_relu(x, 0.3)),
    ('leaky_relu-0.1', lambda x: A.leaky_relu(x, alpha=0.1), lambda x: F.leaky_relu(x, 0.1)),
    ('elu', A.elu, F.elu),
    ('elu-0.5', lambda x: A.elu(x, alpha=0.5), lambda x: F.elu(x, alpha=0.5)),
    ('selu', A.selu, F.selu),
    ('sigmoid', A.sigmoid, torch.sigmoid),
    ('hard_sigmoid', A.hard_sigmoid, hard_sigmoid_torch),
    ('tanh', A.tanh, torch.tanh),
    ('softmax', A.softmax, lambda x: torch.softmax(x, -1)),
    ('softmax-axis1', lambda x: A.softmax(x, axis=1), lambda x: torch.softmax(x, 1)),
    ('log_softmax', A.log_softmax, lambda x: torch.log_softmax(x, -1)),
    ('log_softmax-axis0', lambda x: A.log_softmax(x, axis=0), lambda x: torch.log_softmax(x, 0)),
    ('softplus', A.softplus, F.softplus),
    ('softsign', A.softsign, F.softsign),
    ('gelu', A.gelu, F.gelu),
    ('gelu-tanh', lambda x: A.gelu(x, approximate=True), lambda x: F.gelu(x, approximate='tanh')),
]


@pytest.mark.parametrize('name, ours, theirs', AGAINST_TORCH, ids=[c[0] for c in AGAINST_TORCH])
def test_forward_and_backward_match_torch(name, ours, theirs):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 7, 8)) * 4).astype(np.float32)
    upstream = rng.standard_normal((6, 7, 8)).astype(np.float32)
    tensor = Tensor(x, requires_grad=True)
    y = ours(tensor)
    y.backward(upstream)
    reference = torch.tensor(x, requires_grad=True)
    expected = theirs(reference)
    expected.backward(torch.tensor(upstream))
    assert y.dtype == np.float32 and tensor.grad.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tensor.grad.numpy(), reference.grad.numpy(), rtol=1e-5, atol=1e-5)


ELEMENTWISE = [case for case in AGAINST_TORCH if not case[0].startswith(('softmax', 'log_softmax'))]


@pytest.mark.parametrize('name, ours, theirs', ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_zero_dimensional_input_matches_torch(name, ours, theirs):
    tensor = Tensor(np.array(-0.7, np.float32), requires_grad=True)
    y = ours(tensor)
    y.backward(np.array(1.5, np.float32))
    reference = torch.tensor(-0.7, requires_grad=True)
    expected = theirs(reference)
    expected.backward(torch.tensor(1.5))
    assert y.shape == () and tensor.grad.shape == ()
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(tensor.grad.numpy(), reference.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize('function', [A.softmax, A.log_softmax])
def test_softmax_needs_an_axis(function):
    with pytest.raises(ValueError, match='needs at least 1-D input, got a 0-d array'):
        function(np.array(1.0))
    with pytest.raises(ValueError, match=r'axis 2 is out of range for input of shape \(3, 4\)'):
        function(np.zeros((3, 4)), axis=2)


@pytest.mark.parametrize('function', [
    A.relu, A.leaky_relu, A.elu, A.selu, A.sigmoid, A.hard_sigmoid, A.tanh, A.softmax,
    A.log_softmax, A.softplus, A.softsign, A.gelu])
@pytest.mark.parametrize('dtype', [np.int64, np.bool_])
def test_rejects_non_floating_input(function, dtype):
    with pytest.raises(TypeError, match=f'needs a floating input, got {np.dtype(dtype)}'):
        function(np.ones((2, 3), dtype))


def test_keras_definitions_and_defaults():
    x = np.array([-3.0, -2.5, -1.0, 0.0, 1.0, 2.5, 3.0], dtype=np.float32)
    np.testing.assert_allclose(A.leaky_relu(x).numpy(), np.where(x > 0, x, 0.3 * x))
    np.testing.assert_allclose(A.hard_sigmoid(x).numpy(), [0, 0, 0.3, 0.5, 0.7, 1, 1], atol=1e-7)
    np.testing.assert_allclose(A.elu(x).numpy(), np.where(x > 0, x, np.expm1(x)), rtol=1e-6)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(A.selu(x).numpy(), scale * np.where(x > 0, x, alpha * np.expm1(x)),
                               rtol=1e-6)
    np.testing.assert_allclose(A.softsign(x).numpy(), x / (1 + np.abs(x)), rtol=1e-6)


def test_extreme_inputs_stay_finite_and_accurate():
    x = np.array([-1000.0, -100.0, -50.0, 0.0, 50.0, 100.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        sigmoid = A.sigmoid(x).numpy()
        softplus = A.softplus(x).numpy()
        softmax = A.softmax(x).numpy()
        log_softmax = A.log_softmax(x).numpy()
        gelu = A.gelu(x).numpy()
        sigmoid32 = A.sigmoid(x.astype(np.float32)).numpy()
    np.testing.assert_allclose(sigmoid, [0, math.exp(-100), math.exp(-50), 0.5, 1, 1, 1],
                               rtol=1e-14, atol=0)
    np.testing.assert_allclose(
        softplus, [0, math.exp(-100), math.exp(-50), math.log(2), 50, 100, 1000], rtol=1e-14)
    np.testing.assert_allclose(softmax, [0, 0, 0, 0, 0, 0, 1])
    assert log_softmax[-1] == 0 and log_softmax[0] == -2000
    np.testing.assert_allclose(gelu, np.where(x > 0, x, 0.0), atol=1e-300)
    assert np.isfinite(sigmoid32).all()


def test_erfc_matches_math_erfc():
    y = np.concatenate([np.linspace(0, 26, 20001), np.geomspace(1e-12, 1, 200)])
    expected = np.array([math.erfc(v) for v in y])
    np.testing.assert_allclose(A._erfc(y), expected, rtol=1e-13, atol=0)
    # In float32 erf = 1 - erfc is within about one unit in the last place of math.erf.
    y32 = y[y < 9].astype(np.float32)
    erfc32 = A._erfc(y32)
    assert erfc32.dtype == np.float32
    expected32 = np.array([math.erfc(float(v)) for v in y32])
    np.testing.assert_allclose(erfc32, expected32, rtol=5e-6, atol=0)
    erf = np.array([math.erf(float(v)) for v in y32])
    assert np.abs((1 - erfc32.astype(np.float64)) - erf).max() < 2e-7


class NoBooleanMasks(np.ndarray):
    """An array refusing boolean-mask indexing, which makes CuPy wait for the GPU."""

    def __getitem__(self, key):
        assert getattr(key, 'dtype', None) != bool, 'boolean-mask indexing'
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        assert getattr(key, 'dtype', None) != bool, 'boolean-mask indexing'
        super().__setitem__(key, value)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_erfc_selects_its_ranges_without_boolean_masks(dtype):
    y = np.array([0.0, 0.3, 2.0, 4.5, 8.5], dtype)
    erfc = np.asarray(A._erfc(y.view(NoBooleanMasks)))
    expected = [math.erfc(float(v)) for v in y]
    np.testing.assert_allclose(erfc, expected, rtol=5e-6 if dtype == np.float32 else 1e-13)


def test_exact_gelu_in_float64():
    x = np.linspace(-12, 12, 4001)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    density = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    tensor = Tensor(x, requires_grad=True, dtype='float64')
    y = A.gelu(tensor)
    y.backward(np.ones_like(x))
    np.testing.assert_allclose(y.numpy(), x * cdf, rtol=1e-13, atol=0)
    np.testing.assert_allclose(tensor.grad.numpy(), cdf + x * density, rtol=1e-13, atol=1e-300)
    # PyTorch forms 1 + erf(x / sqrt(2)), which cancels for negative x: compare absolutely.
    reference = torch.tensor(x, requires_grad=True)
    F.gelu(reference).sum().backward()
    np.testing.assert_allclose(y.numpy(), F.gelu(torch.tensor(x)).numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(tensor.grad.numpy(), reference.grad.numpy(), rtol=1e-13, atol=1e-15)


def test_leaves_the_incoming_gradient_untouched():
    x = Tensor(np.array([-1.0, 2.0, -3.0], dtype=np.float32), requires_grad=True)
    upstream = np.array([1.0, 1.0, 1.0], dtype=np.float32)
    for function in (A.relu, A.leaky_relu, A.elu, A.selu, A.sigmoid, A.hard_sigmoid, A.tanh,
                     A.softmax, A.log_softmax, A.softplus, A.softsign, A.gelu):
        function(x).backward(upstream)
        assert (upstream == 1).all(), function.__name__


@pytest.mark.parametrize('shape', [(3, 5), (4, 70_000), (2, 3, 40_000)])
def test_relu_has_the_bits_of_numpy_maximum_with_zero(shape):
    # Contiguous inputs take a tiled path (compared with an array of zeros); it must
    # give what max(x, 0) gives, special values included, across tile boundaries.
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf,
                         np.finfo(np.float32).tiny / 2, -np.finfo(np.float32).tiny / 2],
                        np.float32)
    for start in {0, min(ZERO_TILE - 1, flat.size - 8), flat.size - 8}:
        flat[start:start + 8] = specials
    expected = np.maximum(x, 0).view(np.uint32)
    for array in (x, np.asfortranarray(x)):  # the tiled path and the plain one
        actual = np.ascontiguousarray(A.relu(Tensor(array)).data)
        np.testing.assert_array_equal(actual.view(np.uint32), expected)
