"""oneDNN's batch normalization behind batch_norm: training (output, gradients, running
statistics) and inference against PyTorch and the reference code, proof that it ran, what keeps
the reference code, and bitwise determinism (run to run, 1 or 2 pool threads, training)."""

import contextlib

import numpy as np
import pytest

import minidl
from minidl import config, layers, models, optimizers
from minidl.compute import vendor
from minidl.compute.onednn.batch_norm import BatchNormInferenceKernel, BatchNormKernel
from minidl.functions.normalization import BatchNorm, BatchNormInference, batch_norm
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import (
    assert_close, assert_moved_far, assert_training_repeats_and_matches_the_reference,
    assert_same_bits_on_one_and_two_threads, require_onednn)

require_onednn('its batch normalization')


torch = pytest.importorskip('torch')

# float32 tolerance, the same for every comparison, relative to the largest magnitude of the
# reference result: |actual - expected| <= TOLERANCE * max|expected|. The batch mean and
# variance and the gamma / beta gradients are float32 sums over the batch (at most 150 terms
# per channel here), which oneDNN, the reference code and PyTorch add in different orders; the
# x gradient combines two such sums. The data's offsets are at most twice its spread, so their
# rounding is ~sqrt(terms) * 2**-24 of the largest value: 6e-7 at most is seen (oneDNN and the
# reference alike, against PyTorch in float64). 5e-6 leaves eight times that, and is far below
# what a wrong axis, a lost epsilon (5e-4 of y), a biased running variance (1/150 at least), a
# wrong momentum or a mixed-up gamma / beta gives.
TOLERANCE = 5e-6
# Weights and predictions after 6 SGD steps with momentum, oneDNN against the reference code:
# each step's rounding differences (~1e-7) carry into the next, and this small model amplifies
# them: float32 runs of it, with either code, end 1e-6..1e-4 away from a float64 run, depending
# on the learning rate and batch size. For the configuration below 2.2e-6 is seen (oneDNN
# against the reference); 5e-5 leaves twenty times that, still far below what a biased running
# variance (1/224 here) or a lost epsilon (5e-4) gives.
STATE_TOLERANCE = 5e-5

MOMENTUM = 0.75  # Keras's: the old running statistic's weight (PyTorch's is 1 - it)
EPSILON = 1e-3


def _close(actual, expected, tolerance=TOLERANCE, name=''):
    assert_close(actual, expected, tolerance, name)


@contextlib.contextmanager
def _vendor_kernels():
    """The vendor_kernel of each BatchNorm / BatchNormInference run inside, in order."""
    seen = []

    def spying(forward):
        def spy(self, *arrays):
            result = forward(self, *arrays)
            seen.append(self.vendor_kernel)
            return result
        return spy

    with pytest.MonkeyPatch.context() as patch:
        for function in (BatchNorm, BatchNormInference):
            patch.setattr(function, 'forward', spying(function.forward))
        yield seen


class Case:
    """One batch normalization: x (channel axis ``axis``), gamma and beta or None, the running
    statistics, and an output gradient."""

    def __init__(self, name, shape, axis, affine=True, dtype=np.float32):
        self.name, self.shape, self.axis, self.affine = name, shape, axis, affine
        self.channel_axis = axis % len(shape)
        channels = shape[self.channel_axis]
        rng = np.random.default_rng(sum(map(ord, name)))
        per_channel = [1] * len(shape)
        per_channel[self.channel_axis] = channels
        spread = rng.uniform(0.5, 2, channels).reshape(per_channel)
        offset = rng.uniform(-1, 1, channels).reshape(per_channel)  # every channel its own
        self.x = (rng.standard_normal(shape) * spread + offset).astype(dtype)
        self.gamma = rng.standard_normal(channels).astype(dtype)
        self.beta = rng.standard_normal(channels).astype(dtype)
        self.running_mean = rng.standard_normal(channels).astype(dtype)
        self.running_var = rng.uniform(0.5, 2, channels).astype(dtype)
        self.grad = rng.standard_normal(shape).astype(dtype)

    def __str__(self):
        return self.name

    def names(self, training, needs_grad):
        return (['y'] + (['x grad'] + (['gamma grad', 'beta grad'] if self.affine else [])
                         if needs_grad else [])
                + (['running mean', 'running variance'] if training else []))

    def run_minidl(self, training, needs_grad=True):
        """y, [the gradients (x[, gamma, beta])], [the updated running mean and variance],
        and the vendor kernel that ran."""
        x = Tensor(self.x, requires_grad=needs_grad, dtype=self.x.dtype)
        params = ([Tensor(p, requires_grad=needs_grad, dtype=p.dtype)
                   for p in (self.gamma, self.beta)]
                  if self.affine else [None, None])
        running = [self.running_mean.copy(), self.running_var.copy()]
        with _vendor_kernels() as seen:
            y = batch_norm(x, *params, *running, training, MOMENTUM, EPSILON, self.axis)
        (vendor_kernel,) = seen
        arrays = [y.numpy()]
        if needs_grad:
            y.backward(self.grad)
            arrays += [x.grad.numpy()] + [p.grad.numpy() for p in params if p is not None]
        if training:
            arrays += running
        return [np.array(a, copy=True) for a in arrays], vendor_kernel

    def run_torch(self, training, needs_grad=True):
        """The same in PyTorch, in float64 from the same float32 operands: the truth."""
        axis = self.channel_axis

        def to_torch(array, grad=False, move=True):
            array = np.moveaxis(array, axis, 1) if move else array
            return torch.tensor(np.ascontiguousarray(array), dtype=torch.float64,
                                requires_grad=grad)

        def to_minidl(tensor):
            return np.moveaxis(tensor.detach().numpy(), 1, axis)

        x = to_torch(self.x, needs_grad)
        params = ([to_torch(p, needs_grad, move=False) for p in (self.gamma, self.beta)]
                  if self.affine else [None, None])
        running = [to_torch(r, move=False) for r in (self.running_mean, self.running_var)]
        y = torch.nn.functional.batch_norm(x, *running, *params, training=training,
                                           momentum=1 - MOMENTUM, eps=EPSILON)
        arrays = [to_minidl(y)]
        if needs_grad:
            y.backward(to_torch(self.grad))
            arrays += [to_minidl(x.grad)] + [p.grad.numpy() for p in params if p is not None]
        if training:
            arrays += [r.numpy() for r in running]
        return arrays


CASES = [
    Case('2d', (9, 4), -1),
    Case('3d-channels_last', (5, 7, 3), -1),
    Case('3d-channels_first', (5, 7, 3), 1),
    Case('4d-channels_first', (6, 3, 5, 5), 1),
    Case('4d-channels_last', (4, 6, 5, 3), -1),
    Case('4d-channels_last-batch1', (1, 5, 4, 3), -1),
    Case('4d-channels_first-batch1-1channel', (1, 1, 6, 5), 1),
    Case('5d-channels_first', (3, 4, 2, 3, 5), 1),
    Case('5d-channels_last-no-gamma-beta', (2, 3, 4, 5, 4), -1, affine=False),
    Case('4d-channels_last-no-gamma-beta', (4, 6, 5, 3), -1, affine=False),
]
KERNELS = {True: BatchNormKernel, False: BatchNormInferenceKernel}


@pytest.mark.parametrize('training', [True, False], ids=['training', 'inference'])
@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_torch(case, training, onednn_on):
    needs_grad = training  # oneDNN's inference kernel serves calls that need no gradient
    actual, vendor_kernel = case.run_minidl(training, needs_grad)
    assert type(vendor_kernel) is KERNELS[training]
    expected = case.run_torch(training, needs_grad)
    names = case.names(training, needs_grad)
    assert len(actual) == len(expected) == len(names)
    for name, a, e in zip(names, actual, expected):
        assert a.dtype == np.float32, name
        _close(a, e, name=name)


@pytest.mark.parametrize('case', [CASES[0], CASES[3], CASES[4], CASES[8]], ids=str)
def test_inference_that_needs_a_gradient_keeps_the_reference_code(case, onednn_on, executed):
    actual, vendor_kernel = case.run_minidl(training=False, needs_grad=True)
    assert vendor_kernel is None and executed == []
    expected = case.run_torch(training=False, needs_grad=True)
    for name, a, e in zip(case.names(False, True), actual, expected):
        _close(a, e, name=name)


@pytest.mark.parametrize('training', [True, False], ids=['training', 'inference'])
@pytest.mark.parametrize('case', CASES, ids=str)
def test_onednn_matches_the_reference_code(case, training, onednn_on, monkeypatch):
    actual, vendor_kernel = case.run_minidl(training, needs_grad=training)
    assert type(vendor_kernel) is KERNELS[training]
    monkeypatch.setattr(config, 'use_onednn', 'never')
    expected, reference_kernel = case.run_minidl(training, needs_grad=training)
    assert reference_kernel is None
    for name, a, e in zip(case.names(training, training), actual, expected):
        _close(a, e, name=name)


@pytest.mark.parametrize('case', [CASES[0], CASES[2], CASES[3], CASES[4], CASES[7]], ids=str)
def test_the_onednn_path_really_runs_with_fast_implementations(case, onednn_on, executed):
    _, training_kernel = case.run_minidl(training=True)
    ran = [id(p) for p in executed]
    plan = training_kernel.plan
    assert ran == [id(plan.forward), id(plan.backward)]  # forward, then backward
    del executed[:]
    _, inference_kernel = case.run_minidl(training=False, needs_grad=False)
    assert [id(p) for p in executed] == [id(inference_kernel.plan.forward)]
    for p in (plan.forward, plan.backward, inference_kernel.plan.forward):
        assert not p.implementation.startswith('ref'), p.implementation
        assert p.omp_threads == 1  # sums over the batch: one thread, one order


def test_never_runs_no_onednn_primitive(monkeypatch, executed):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    for training in (True, False):
        _, vendor_kernel = CASES[3].run_minidl(training, needs_grad=training)
        assert vendor_kernel is None
    assert executed == []


@pytest.mark.parametrize('case', [
    Case('float64', (4, 3, 5), 1, dtype=np.float64),
    Case('6d', (2, 3, 2, 2, 3, 2), 1),
    Case('axis0', (4, 6), 0),
    Case('axis0-channels_first-like', (3, 4, 5), 0),
    Case('4d-middle-axis', (4, 5, 3, 6), 2),  # neither nchw nor nhwc: only oneDNN's ref kernel
], ids=str)
def test_what_onednn_does_not_serve_keeps_the_reference_code(case, onednn_on, executed):
    for training in (True, False):
        actual, vendor_kernel = case.run_minidl(training, needs_grad=training)
        assert vendor_kernel is None
        for name, a, e in zip(case.names(training, training), actual,
                              case.run_torch(training, needs_grad=training)):
            assert a.dtype == case.x.dtype
            _close(a, e, name=name)
    assert executed == []


@pytest.mark.parametrize('case', [CASES[0], CASES[3], CASES[4], CASES[7]], ids=str)
def test_onednn_is_bitwise_repeatable(case, onednn_on):
    for training in (True, False):
        first, _ = case.run_minidl(training, needs_grad=training)
        for _ in range(2):
            again, _ = case.run_minidl(training, needs_grad=training)
            for name, a, b in zip(case.names(training, training), first, again):
                assert np.array_equal(a, b), name


def _both_modes(case):
    """A run of ``case`` in training and in inference mode, both through oneDNN."""
    def run():
        training, training_kernel = case.run_minidl(training=True)
        inference, inference_kernel = case.run_minidl(training=False, needs_grad=False)
        assert isinstance(training_kernel, BatchNormKernel)
        assert isinstance(inference_kernel, BatchNormInferenceKernel)
        return training + inference

    return run


@pytest.mark.parametrize('fresh_primitives', [False, True], ids=['shared', 'fresh'])
@pytest.mark.parametrize('case', [CASES[3], CASES[4]], ids=str)
def test_one_and_two_pool_threads_give_the_same_bits(case, fresh_primitives, onednn_on,
                                                       monkeypatch):
    assert_same_bits_on_one_and_two_threads(monkeypatch, fresh_primitives, _both_modes(case),
                                            case.names(True, True) + ['inference y'])


def _train(monkeypatch, use_onednn):
    monkeypatch.setattr(config, 'use_onednn', use_onednn)
    vendor.forget()
    minidl.set_seed(7)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 8, 7, 2)).astype(np.float32)
    y = rng.integers(0, 3, 12)
    model = models.Sequential([
        # No bias before the batch norm: its gradient is 0 up to rounding, so it would hold
        # nothing but rounding noise, different in each implementation.
        layers.Conv2D(4, 3, padding='same', use_bias=False, input_shape=(8, 7, 2)),
        layers.BatchNormalization(momentum=0.8),
        layers.Activation('relu'), layers.Flatten(), layers.Dense(3)])
    model.compile(optimizers.SGD(0.05, momentum=0.9), 'sparse_categorical_crossentropy')
    initial = model.get_weights()
    with _vendor_kernels() as seen:
        model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
        trained = len(seen)
        predictions = model.predict(x, batch_size=4)
    onednn = use_onednn == 'always'
    assert trained == 6 and len(seen) == 9  # 3 batches a epoch, then 3 to predict
    assert all(isinstance(k, BatchNormKernel) == onednn for k in seen[:trained])
    assert all(isinstance(k, BatchNormInferenceKernel) == onednn for k in seen[trained:])
    weights = model.get_weights()
    assert_moved_far(initial, weights, STATE_TOLERANCE)  # the moving statistics too
    return weights + [predictions]


def test_training_a_batch_norm_model_with_onednn_repeats_and_matches_the_reference(monkeypatch):
    # conv kernel, gamma, beta, moving mean, moving variance, dense kernel and bias; predictions
    assert_training_repeats_and_matches_the_reference(
        lambda use_onednn: _train(monkeypatch, use_onednn), STATE_TOLERANCE, 7 + 1)
