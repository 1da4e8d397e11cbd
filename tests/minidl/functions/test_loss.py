import math
import warnings

import numpy as np
import pytest

from minidl.functions import loss as L
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

torch = pytest.importorskip('torch')
F = torch.nn.functional


def probabilities(*shape, seed=0, axis=-1):
    values = random(*shape, seed=seed, low=0.1, high=1.0)
    return values / values.sum(axis=axis, keepdims=True)


def class_indices(*shape, classes, seed=0):
    return np.random.default_rng(seed).integers(0, classes, size=shape)


GRADCHECK_CASES = [
    GradCase(L.SoftmaxCrossEntropy, L.softmax_cross_entropy,
             [class_indices(4, classes=5), random(4, 5)], name='indices'),
    GradCase(L.SoftmaxCrossEntropy, L.softmax_cross_entropy,
             [probabilities(4, 5), random(4, 5)], name='probabilities'),
    GradCase(L.SoftmaxCrossEntropy, lambda t, x: L.softmax_cross_entropy(t, x, axis=1),
             [class_indices(2, 3, classes=4), random(2, 4, 3)], name='indices-axis1'),
    GradCase(L.SoftmaxCrossEntropy, lambda t, x: L.softmax_cross_entropy(t, x, axis=0),
             [random(3, 2, low=0, high=1), random(3, 2)], name='unnormalized-axis0'),
    GradCase(L.BinaryCrossEntropy, L.binary_cross_entropy,
             [random(3, 4, low=0, high=1), random(3, 4, seed=1, low=0.1, high=0.9)]),
    GradCase(L.SigmoidCrossEntropy, lambda t, x: L.binary_cross_entropy(t, x, from_logits=True),
             [random(3, 4, low=0, high=1), random(3, 4, seed=1) * 3]),
    GradCase(L.MeanSquaredError, L.mse, [random(3, 4), random(3, 4, seed=1)]),
    GradCase(L.MeanAbsoluteError, L.mae, [random(3, 4), random(3, 4, seed=1)]),
    GradCase(L.Huber, lambda t, p: L.huber(t, p, delta=0.7), [random(3, 4), random(3, 4, seed=1)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def run_both(ours, theirs, labels, predictions, label_grad=False):
    """Forward and backward (random upstream gradient) of a loss in minidl and PyTorch."""
    labels_tensor = Tensor(labels, requires_grad=label_grad)
    predictions_tensor = Tensor(predictions, requires_grad=True)
    loss = ours(labels_tensor, predictions_tensor)
    upstream = np.random.default_rng(3).standard_normal(loss.shape).astype(np.float32)
    loss.backward(upstream)
    torch_labels = torch.tensor(labels, requires_grad=label_grad)
    torch_predictions = torch.tensor(predictions, requires_grad=True)
    expected = theirs(torch_labels, torch_predictions)
    expected.backward(torch.tensor(upstream))
    assert loss.dtype == np.float32 and loss.shape == tuple(expected.shape)
    np.testing.assert_allclose(loss.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(predictions_tensor.grad.numpy(), torch_predictions.grad.numpy(),
                               rtol=1e-4, atol=1e-6)
    if label_grad:
        np.testing.assert_allclose(labels_tensor.grad.numpy(), torch_labels.grad.numpy(),
                                   rtol=1e-4, atol=1e-6)


def float32(array):
    return np.asarray(array, dtype=np.float32)


def test_cross_entropy_of_class_indices_matches_torch():
    logits = float32(random(16, 10) * 3)
    labels = class_indices(16, classes=10)
    run_both(L.softmax_cross_entropy, lambda t, x: F.cross_entropy(x, t, reduction='none'),
             labels, logits)


def test_cross_entropy_of_probabilities_matches_torch():
    logits = float32(random(8, 6) * 3)
    run_both(L.softmax_cross_entropy, lambda t, x: F.cross_entropy(x, t, reduction='none'),
             float32(probabilities(8, 6, seed=2)), logits, label_grad=True)
    one_hot = np.eye(6, dtype=np.float32)[class_indices(8, classes=6)]
    run_both(L.softmax_cross_entropy, lambda t, x: F.cross_entropy(x, t, reduction='none'),
             one_hot, logits)


def test_cross_entropy_of_unnormalized_targets_matches_torch():
    logits = float32(random(5, 4) * 2)
    targets = float32(random(5, 4, seed=4, low=0, high=2))
    run_both(L.softmax_cross_entropy, lambda t, x: F.cross_entropy(x, t, reduction='none'),
             targets, logits, label_grad=True)


def test_cross_entropy_class_axis_matches_torch():
    logits = float32(random(3, 5, 7) * 3)  # (batch, classes, length): PyTorch's layout
    labels = class_indices(3, 7, classes=5)
    run_both(lambda t, x: L.softmax_cross_entropy(t, x, axis=1),
             lambda t, x: F.cross_entropy(x, t, reduction='none'), labels, logits)
    # Keras's layout puts the classes last; PyTorch wants them at axis 1.
    run_both(L.softmax_cross_entropy,
             lambda t, x: F.cross_entropy(x.movedim(-1, 1), t, reduction='none'),
             labels, np.ascontiguousarray(logits.transpose(0, 2, 1)))


def test_cross_entropy_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [-1000.0, -1000.0, 1000.0]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        loss = L.softmax_cross_entropy(np.array([0, 0]), logits).numpy()
    np.testing.assert_allclose(loss, [0.0, 2000.0])


@pytest.mark.parametrize('labels, logits, message', [
    (np.array([0, 5]), np.zeros((2, 5)), r'\[0, 5\).*from 0 to 5'),
    (np.array([-1, 2]), np.zeros((2, 5)), r'from -1 to 2'),
    (np.array([[0], [1]]), np.zeros((2, 5)), r'need shape \(2,\)'),
    (np.zeros((2, 4)), np.zeros((2, 5)), r'\(2, 4\) do not match logits of shape \(2, 5\)'),
])
def test_cross_entropy_rejects_bad_labels(labels, logits, message):
    with pytest.raises(ValueError, match=message):
        L.softmax_cross_entropy(labels, logits)


def test_cross_entropy_rejects_bad_axis():
    with pytest.raises(ValueError, match='axis 2 is out of range'):
        L.softmax_cross_entropy(np.zeros((2, 3)), np.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match='needs at least 1-D input, got a 0-d array'):
        L.softmax_cross_entropy(np.array(0), np.array(1.0))


def test_binary_cross_entropy_matches_torch():
    labels = float32(random(6, 5, low=0, high=1))
    predictions = float32(random(6, 5, seed=1, low=0.05, high=0.95))
    run_both(L.binary_cross_entropy,
             lambda t, p: F.binary_cross_entropy(p, t, reduction='none').mean(-1),
             labels, predictions)


def test_binary_cross_entropy_clips_like_keras():
    labels = np.array([[1.0, 0.0, 1.0, 0.0]], dtype=np.float32)
    predictions = Tensor(np.array([[0.0, 1.0, 1.0, 0.0]], dtype=np.float32), requires_grad=True)
    loss = L.binary_cross_entropy(labels, predictions)
    # Keras: clip to [eps, 1 - eps], then -(t log(p + eps) + (1 - t) log(1 - p + eps)).
    eps = np.float32(1e-7)
    clipped = np.clip(predictions.numpy(), eps, 1 - eps)
    expected = -(labels * np.log(clipped + eps) + (1 - labels) * np.log(1 - clipped + eps))
    np.testing.assert_allclose(loss.numpy(), expected.mean(-1), rtol=1e-6)
    # Only the two wrong predictions count, both about -log(2e-7); 1 - eps rounds in float32.
    wrong = -math.log(2e-7) - math.log(1 - float(np.float32(1 - 1e-7)) + 1e-7)
    assert math.isclose(loss.item(), wrong / 4, rel_tol=1e-5)
    loss.backward()
    assert (predictions.grad.numpy() == 0).all()  # every prediction was clipped


def test_binary_cross_entropy_from_logits_matches_torch():
    labels = float32(random(6, 5, low=0, high=1))
    logits = float32(random(6, 5, seed=1) * 4)
    run_both(lambda t, x: L.binary_cross_entropy(t, x, from_logits=True),
             lambda t, x: F.binary_cross_entropy_with_logits(x, t, reduction='none').mean(-1),
             labels, logits, label_grad=True)


def test_binary_cross_entropy_from_logits_is_stable():
    logits = np.array([[-200.0, 200.0, -200.0, 200.0]])
    labels = np.array([[0.0, 1.0, 1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        loss = L.binary_cross_entropy(labels, logits, from_logits=True)
    np.testing.assert_allclose(loss.numpy(), [100.0])


@pytest.mark.parametrize('ours, theirs', [
    (L.mse, lambda t, p: F.mse_loss(p, t, reduction='none').mean(-1)),
    (L.mae, lambda t, p: F.l1_loss(p, t, reduction='none').mean(-1)),
    (L.huber, lambda t, p: F.huber_loss(p, t, reduction='none').mean(-1)),
    (lambda t, p: L.huber(t, p, delta=0.3),
     lambda t, p: F.huber_loss(p, t, reduction='none', delta=0.3).mean(-1)),
], ids=['mse', 'mae', 'huber', 'huber-0.3'])
def test_regression_losses_match_torch(ours, theirs):
    labels = float32(random(4, 3, 6) * 2)
    predictions = float32(random(4, 3, 6, seed=1) * 2)
    run_both(ours, theirs, labels, predictions, label_grad=True)


def test_one_dimensional_inputs_average_to_a_scalar():
    loss = L.mse(np.array([1.0, 2.0]), np.array([2.0, 4.0], dtype=np.float32))
    assert loss.shape == () and loss.item() == 2.5


@pytest.mark.parametrize('function', [L.mse, L.mae, L.huber, L.binary_cross_entropy])
def test_regression_losses_reject_mismatched_shapes(function):
    with pytest.raises(ValueError, match=r'labels of shape \(4,\) do not match predictions '
                                         r'of shape \(4, 1\)'):
        function(np.zeros(4), np.zeros((4, 1)))


def test_huber_rejects_non_positive_delta():
    with pytest.raises(ValueError, match='delta must be positive'):
        L.huber(np.zeros(3), np.zeros(3), delta=0)
