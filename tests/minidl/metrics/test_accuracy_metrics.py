import numpy as np
import pytest

from minidl import metrics
from minidl.tensor import Tensor


def probabilities(*shape, seed=0):
    values = np.random.default_rng(seed).uniform(0, 1, size=shape).astype(np.float32)
    return values / values.sum(axis=-1, keepdims=True)


def indices(*shape, classes, seed=1):
    return np.random.default_rng(seed).integers(0, classes, size=shape)


def test_binary_accuracy():
    y_pred = np.array([[0.2, 0.7], [0.6, 0.4], [0.9, 0.51]], dtype=np.float32)
    y_true = np.array([[0, 1], [0, 0], [1, 0]])
    np.testing.assert_array_equal(metrics.binary_accuracy(y_true, y_pred).numpy(), [1, 0.5, 0.5])
    np.testing.assert_array_equal(
        metrics.binary_accuracy(y_true, y_pred, threshold=0.55).numpy(), [1, 0.5, 1])
    # Targets of shape (batch,) for an output of shape (batch, 1).
    np.testing.assert_array_equal(
        metrics.binary_accuracy(np.array([1.0, 0.0]), np.array([[0.8], [0.8]])).numpy(), [1, 0])


def test_categorical_and_sparse_accuracy_agree_with_argmax():
    y_pred, labels = probabilities(20, 5), indices(20, classes=5)
    expected = (y_pred.argmax(-1) == labels).astype(np.float32)
    assert 0 < expected.mean() < 1
    np.testing.assert_array_equal(
        metrics.categorical_accuracy(np.eye(5)[labels], y_pred).numpy(), expected)
    for given in (labels, labels[:, None], labels.astype(np.float32), Tensor(labels)):
        values = metrics.sparse_categorical_accuracy(given, Tensor(y_pred))
        assert values.dtype == np.float32 and not values.requires_grad
        np.testing.assert_array_equal(values.numpy(), expected)


def test_sequence_outputs_give_per_step_values():
    y_pred, labels = probabilities(2, 3, 4), indices(2, 3, classes=4)
    values = metrics.sparse_categorical_accuracy(labels, y_pred)
    np.testing.assert_array_equal(values.numpy(), y_pred.argmax(-1) == labels)


def top_k_reference(y_pred, labels, k):
    target = y_pred[np.arange(len(labels)), labels]
    return ((y_pred > target[:, None]).sum(-1) < k).astype(np.float32)


@pytest.mark.parametrize('k', [1, 2, 5])
def test_top_k_accuracy(k):
    y_pred, labels = probabilities(30, 5), indices(30, classes=5)
    expected = top_k_reference(y_pred, labels, k)
    torch = pytest.importorskip('torch')
    in_top_k = (torch.tensor(y_pred).topk(k, dim=-1).indices == torch.tensor(labels)[:, None])
    np.testing.assert_array_equal(expected, in_top_k.any(-1).numpy())  # no ties here
    np.testing.assert_array_equal(
        metrics.sparse_top_k_categorical_accuracy(labels, y_pred, k=k).numpy(), expected)
    np.testing.assert_array_equal(
        metrics.top_k_categorical_accuracy(np.eye(5)[labels], y_pred, k=k).numpy(), expected)


def test_top_k_ties_count_for_the_target_and_bad_labels_never_do():
    y_pred = np.array([[0.4, 0.4, 0.2], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7]], dtype=np.float32)
    np.testing.assert_array_equal(
        metrics.sparse_top_k_categorical_accuracy([0, 1, 7], y_pred, k=1).numpy(), [1, 1, 0])
    with pytest.raises(ValueError, match='k must be a positive integer'):
        metrics.top_k_categorical_accuracy(np.eye(3), y_pred, k=0)
    with pytest.raises(ValueError, match='k must be a positive integer'):
        metrics.TopKCategoricalAccuracy(k=2.5)


def test_accuracy_compares_elementwise():
    values = metrics.accuracy(np.array([[1, 2], [3, 4]]), np.array([[1, 0], [3, 4]]))
    np.testing.assert_array_equal(values.numpy(), [[1, 0], [1, 1]])
    metric = metrics.Accuracy()
    metric.update_state([[1, 2], [3, 4]], [[1, 0], [3, 4]], sample_weight=[1.0, 3.0])
    assert metric.result() == pytest.approx((1 + 0 + 3 + 3) / 8)


@pytest.mark.parametrize('cls, labels_are_sparse, kwargs', [
    (metrics.CategoricalAccuracy, False, {}), (metrics.SparseCategoricalAccuracy, True, {}),
    (metrics.TopKCategoricalAccuracy, False, {'k': 2}),
    (metrics.SparseTopKCategoricalAccuracy, True, {'k': 2})])
def test_weighted_batches_equal_the_whole_set(cls, labels_are_sparse, kwargs):
    y_pred, labels = probabilities(12, 4), indices(12, classes=4)
    y_true = labels if labels_are_sparse else np.eye(4)[labels]
    weights = np.random.default_rng(3).uniform(0, 1, size=12)
    metric = cls(**kwargs)
    for start, stop in [(0, 5), (5, 6), (6, 12)]:
        metric.update_state(y_true[start:stop], y_pred[start:stop], weights[start:stop])
    correct = top_k_reference(y_pred, labels, kwargs.get('k', 1))
    assert metric.result() == pytest.approx(np.average(correct, weights=weights), rel=1e-12)
    copy = cls.from_config(metric.get_config())
    assert copy.get_config() == metric.get_config() and copy.result() == 0.0


def test_binary_accuracy_class_with_sequences_and_per_sample_weights():
    y_pred = np.array([[[0.9], [0.2]], [[0.3], [0.6]]], dtype=np.float32)
    y_true = np.array([[1, 1], [0, 0]])  # (batch, steps) for an output (batch, steps, 1)
    metric = metrics.BinaryAccuracy(threshold=0.5)
    metric.update_state(y_true, y_pred, sample_weight=[1.0, 2.0])
    assert metric.result() == pytest.approx((1 + 0 + 2 * (1 + 0)) / 6)
    assert metric.name == 'binary_accuracy' and metric.get_config()['threshold'] == 0.5


def test_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r'\(4, 3\).*\(4, 5\)'):
        metrics.categorical_accuracy(np.zeros((4, 3)), probabilities(4, 5))
    with pytest.raises(ValueError, match=r'\(4, 5\).*\(4, 2\)'):
        metrics.sparse_categorical_accuracy(np.zeros((4, 2)), probabilities(4, 5))
