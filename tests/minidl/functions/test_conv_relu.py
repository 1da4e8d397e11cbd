"""conv2d and conv1d with the ReLU fused (``activation='relu'``): the same bits as the
convolution followed by ``relu``, forward and backward, on whichever branch runs (oneDNN,
or the reference code under ``MINIDL_USE_ONEDNN=never``), NaN kept as numpy and PyTorch
keep it; and a Conv2D layer with ``activation='relu'`` builds the fused Function."""

import collections

import numpy as np
import pytest

from minidl import Tensor, layers, losses, models, naming, optimizers
from minidl.compute.relu import positive_part_grad
from minidl import functions as F
from minidl.functions.activation import ReLU
from minidl.functions.conv import Conv1D, Conv2D, conv1d, conv2d
from tests.gradcases import GradCase, random, run_gradcheck
from tests.minidl.compute.onednn_support import vendor_kernels_seen

GRADCHECK_CASES = [
    GradCase(Conv2D, lambda x, k, b: conv2d(x, k, b, padding='same', activation='relu'),
             [random(2, 5, 5, 2), random(3, 3, 2, 3, seed=1), random(3, seed=2)],
             name='relu'),
    GradCase(Conv1D, lambda x, k, b: conv1d(x, k, b, padding='causal', activation='relu'),
             [random(2, 7, 3), random(3, 3, 2, seed=1), random(2, seed=2)], name='relu'),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


@pytest.fixture(autouse=True)
def _layer_names_untouched(monkeypatch):
    """The layers made here leave the default-name counts (read by other tests) as found."""
    monkeypatch.setattr(naming, '_counts', collections.Counter(naming._counts))


def _float32(*shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# (x shape, kernel shape, keyword arguments): LeNet's two convolutions (W2's batch of 64,
# so that the oneDNN branch runs its real chunks), channels first, strided, no bias.
CASES = [
    ((64, 28, 28, 1), (5, 5, 1, 6), dict(padding='same')),
    ((64, 14, 14, 6), (5, 5, 6, 16), dict()),
    ((3, 6, 9, 8), (3, 3, 6, 5), dict(padding='same', data_format='channels_first')),
    ((3, 9, 8, 4), (3, 3, 4, 7), dict(strides=2, dilation_rate=(1, 2))),
    ((2, 7, 7, 3), (3, 3, 3, 4), dict(bias=False)),
]


def _fused_and_parts(x_shape, kernel_shape, kwargs, x=None, needs_x=True):
    """Forward and backward of conv2d(activation='relu') and of relu(conv2d): each
    (output, gradients) as numpy arrays, and the vendor kernels each branch ran."""
    kwargs = dict(kwargs)
    with_bias = kwargs.pop('bias', True)
    arrays = [_float32(*x_shape, seed=0) if x is None else x, _float32(*kernel_shape, seed=1)]
    if with_bias:
        arrays.append(_float32(kernel_shape[-1], seed=2))
    results, upstream = [], None
    for fused in (True, False):
        tensors = [Tensor(a, requires_grad=i > 0 or needs_x) for i, a in enumerate(arrays)]
        with pytest.MonkeyPatch.context() as patch:
            seen = vendor_kernels_seen(patch, Conv2D)
            if fused:
                y = conv2d(*tensors, activation='relu', **kwargs)
            else:
                y = F.relu(conv2d(*tensors, **kwargs))
        if upstream is None:
            upstream = _float32(*y.shape, seed=3)
        y.backward(upstream)
        grads = [None if t.grad is None else t.grad.numpy() for t in tensors]
        results.append((y.numpy(), grads, [type(kernel) for kernel in seen]))
    return results


@pytest.mark.parametrize('needs_x', [True, False], ids=['x-grad', 'no-x-grad'])
@pytest.mark.parametrize('x_shape,kernel_shape,kwargs', CASES)
def test_same_bits_as_conv2d_then_relu(x_shape, kernel_shape, kwargs, needs_x):
    (y, grads, seen), (y_parts, grads_parts, seen_parts) = _fused_and_parts(
        x_shape, kernel_shape, kwargs, needs_x=needs_x)
    assert len(seen) == 1 and seen == seen_parts  # one call each, on the same branch
    assert (y == 0).any() and (y > 0).any()  # the ReLU cut something, and kept something
    np.testing.assert_array_equal(y, y_parts)
    for a, b in zip(grads, grads_parts):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


def test_onednn_masks_a_first_convolution_in_its_weight_tasks(monkeypatch):
    # Only the kernel's gradient wanted (a network's first convolution): each weight chunk
    # masks its own rows in its pool task; with the input's gradient, the whole array once.
    from minidl.compute.onednn import convolution
    masked = []
    mask = convolution.positive_part_grad
    monkeypatch.setattr(convolution, 'positive_part_grad',
                        lambda grad, y: masked.append(len(grad)) or mask(grad, y))
    for needs_x in (False, True):
        masked.clear()
        (_, _, seen), _ = _fused_and_parts(*CASES[0][:2], CASES[0][2], needs_x=needs_x)
        if seen != [convolution.Conv2DKernel]:
            pytest.skip('oneDNN does not run here')
        assert sorted(masked) == ([64] if needs_x else [20, 22, 22])  # from either thread


def test_conv1d_same_bits_as_conv1d_then_relu():
    x, kernel, bias = _float32(4, 11, 3, seed=0), _float32(3, 3, 5, seed=1), _float32(5, seed=2)
    upstream = _float32(4, 11, 5, seed=3)
    outputs = []
    for fused in (True, False):
        tensors = [Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
        y = conv1d(*tensors, padding='causal', activation='relu') if fused else \
            F.relu(conv1d(*tensors, padding='causal'))
        y.backward(upstream)
        outputs.append([y.numpy()] + [t.grad.numpy() for t in tensors])
    for a, b in zip(*outputs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('grad_dtype,y_dtype', [(np.float32, np.float32),
                                                 (np.float64, np.float32),
                                                 (np.float16, np.float32)])
def test_the_gradient_mask_has_the_bits_of_multiplying_by_the_bool_mask(grad_dtype, y_dtype):
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 2.5, -2.5])
    y = np.tile(specials, 9).astype(y_dtype)
    grad = np.repeat(specials, 9).astype(grad_dtype)  # every (grad, y) pair of specials
    y, grad = y.reshape(3, 3, 9), grad.reshape(3, 3, 9)
    for g in (grad, grad[:, ::-1]):  # and a non-contiguous gradient
        with np.errstate(invalid='ignore'):  # inf * 0, in both
            expected = g * (y > 0)
            actual = positive_part_grad(g, y)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        # The same bits: NaN where NaN, -0.0 where -0.0.
        assert actual.tobytes() == np.ascontiguousarray(expected).tobytes()


def test_nan_and_inf_are_kept_as_pytorch_keeps_them():
    torch = pytest.importorskip('torch')
    x = _float32(2, 8, 8, 3, seed=0)
    x[0, 2, 3, 1], x[1, 5, 5, 0], x[1, 0, 7, 2] = np.nan, np.inf, -np.inf
    (y, grads, _), (y_parts, grads_parts, _) = _fused_and_parts(
        x.shape, (3, 3, 3, 4), dict(padding='same'), x=x)
    assert np.isnan(y).any() and np.isinf(y).any()
    np.testing.assert_array_equal(y, y_parts)  # NaN where NaN, the same bits elsewhere
    for a, b in zip(grads, grads_parts):
        np.testing.assert_array_equal(a, b)
    kernel, bias = _float32(3, 3, 3, 4, seed=1), _float32(4, seed=2)
    expected = torch.relu(torch.nn.functional.conv2d(
        torch.from_numpy(x.transpose(0, 3, 1, 2).copy()),
        torch.from_numpy(kernel.transpose(3, 2, 0, 1).copy()), torch.from_numpy(bias),
        padding=1)).numpy().transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(expected))
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)  # inf == inf, NaN == NaN


def test_gradients_match_pytorch():
    torch = pytest.importorskip('torch')
    x, kernel, bias = _float32(16, 14, 14, 6, seed=0), _float32(5, 5, 6, 16, seed=1), \
        _float32(16, seed=2)
    tensors = [Tensor(a, requires_grad=True) for a in (x, kernel, bias)]
    y = conv2d(*tensors, activation='relu')
    upstream = _float32(*y.shape, seed=3)
    y.backward(upstream)
    torch_tensors = [torch.tensor(a, requires_grad=True) for a in (
        x.transpose(0, 3, 1, 2).copy(), kernel.transpose(3, 2, 0, 1).copy(), bias)]
    y_t = torch.relu(torch.nn.functional.conv2d(*torch_tensors))
    y_t.backward(torch.from_numpy(upstream.transpose(0, 3, 1, 2).copy()))
    expected = [y_t.detach().numpy().transpose(0, 2, 3, 1),
                torch_tensors[0].grad.numpy().transpose(0, 2, 3, 1),
                torch_tensors[1].grad.numpy().transpose(2, 3, 1, 0), torch_tensors[2].grad.numpy()]
    for actual, wanted in zip([y.numpy()] + [t.grad.numpy() for t in tensors], expected):
        np.testing.assert_allclose(actual, wanted, rtol=1e-4, atol=1e-4 * np.abs(wanted).max())


def _spy(monkeypatch):
    """Count the Conv2D calls with and without the fused ReLU, and the ReLU Functions."""
    calls = {'fused': 0, 'plain': 0, 'relu': 0}
    conv_forward, relu_activate = Conv2D.forward, ReLU.activate

    def conv_spy(self, *arrays):
        calls['fused' if self.relu else 'plain'] += 1
        return conv_forward(self, *arrays)

    def relu_spy(self, x):
        calls['relu'] += 1
        return relu_activate(self, x)

    monkeypatch.setattr(Conv2D, 'forward', conv_spy)
    monkeypatch.setattr(ReLU, 'activate', relu_spy)
    return calls


def test_lenet_training_runs_the_fused_function(monkeypatch):
    model = models.Sequential([  # W2 of the benchmarks
        layers.Input((28, 28, 1)),
        layers.Conv2D(6, 5, padding='same', activation='relu'), layers.MaxPooling2D(2),
        layers.Conv2D(16, 5, activation='relu'), layers.MaxPooling2D(2), layers.Flatten(),
        layers.Dense(120, activation='relu'), layers.Dense(84, activation='relu'),
        layers.Dense(10)])
    model.compile(optimizer=optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    calls = _spy(monkeypatch)
    model.train_on_batch(_float32(8, 28, 28, 1, seed=0), np.arange(8) % 10)
    assert calls == {'fused': 2, 'plain': 0, 'relu': 0}


@pytest.mark.parametrize('make', [
    lambda: layers.Conv2D(3, 3, activation=lambda x: F.relu(x)),
    lambda: layers.Conv2D(3, 3, activation='linear'),
    lambda: layers.Conv2DTranspose(3, 3, activation='relu'),
], ids=['relu-callable', 'linear', 'transposed'])
def test_other_layers_keep_their_activation_apart(monkeypatch, make):
    model = models.Sequential([layers.Input((6, 6, 2)), make()])
    calls = _spy(monkeypatch)
    model.predict_on_batch(_float32(2, 6, 6, 2, seed=0))
    assert calls['fused'] == 0
    assert calls['relu'] == (0 if model.layers[-1].activation.__name__ == 'linear' else 1)


def test_other_activations_are_rejected():
    with pytest.raises(ValueError, match='activation'):
        conv2d(np.ones((1, 5, 5, 2), np.float32), np.ones((3, 3, 2, 2), np.float32),
               activation='tanh')
    with pytest.raises(ValueError, match='activation'):
        conv1d(np.ones((1, 5, 2), np.float32), np.ones((3, 2, 2), np.float32),
               activation='sigmoid')
