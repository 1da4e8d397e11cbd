"""Accuracy metrics: per-sample functions and their Keras metric classes.

Each function takes ``(y_true, y_pred)`` (Tensors, arrays or numbers) and
returns a float Tensor of per-sample values, 1.0 where right and 0.0 where
wrong, computed on the device's arrays without recording a graph. Targets
follow the losses' conventions (``minidl.losses.inputs``): one-hot or
probability vectors for the categorical forms, class indices (with or
without a trailing axis of size one) for the sparse forms.
"""

import operator

from minidl.losses.inputs import labels_like, prediction, prepare, sparse_labels
from minidl.metrics.base import MeanMetricWrapper
from minidl.tensor import Tensor


def _values(correct, y_pred):
    """Booleans (or fractions) as a Tensor of ``y_pred``'s floating dtype."""
    return Tensor.wrap(correct.astype(y_pred.dtype))


def accuracy(y_true, y_pred):
    """1.0 where ``y_true == y_pred``, elementwise (for labels compared to predicted labels)."""
    if not isinstance(y_pred, Tensor):
        y_pred = Tensor(y_pred)
    y_true = labels_like('accuracy', y_true, y_pred)
    correct = y_true.data == y_pred.data
    return Tensor.wrap(correct.astype(y_pred.dtype if y_pred.dtype.kind == 'f' else 'float32'))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """The fraction of the last axis where ``y_pred > threshold`` equals ``y_true``, per sample."""
    y_true, y_pred = prepare('binary_accuracy', y_true, y_pred)
    predicted = (y_pred.data > threshold).astype(y_pred.dtype)
    return _values((y_true.data == predicted).mean(axis=-1), y_pred)


def categorical_accuracy(y_true, y_pred):
    """1.0 where the largest entry of ``y_pred`` is that of one-hot ``y_true``, per sample."""
    y_true, y_pred = prepare('categorical_accuracy', y_true, y_pred)
    xp = y_pred.xp
    return _values(xp.argmax(y_true.data, axis=-1) == xp.argmax(y_pred.data, axis=-1), y_pred)


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the largest entry of ``y_pred`` is at the class index ``y_true``, per sample."""
    y_pred = prediction('sparse_categorical_accuracy', y_pred)
    labels = sparse_labels('sparse_categorical_accuracy', y_true, y_pred)
    return _values(labels.data == y_pred.xp.argmax(y_pred.data, axis=-1), y_pred)


def _check_k(name, k):
    try:
        k = operator.index(k)
    except TypeError:
        raise ValueError(f'{name}: k must be a positive integer, got {k!r}') from None
    if k < 1:
        raise ValueError(f'{name}: k must be a positive integer, got {k}')


def _in_top_k(predictions, targets, k):
    """Whether each target class is among the ``k`` largest predictions.

    As TensorFlow's ``in_top_k``: classes tied with the target's score count
    for it (a target is in the top k when fewer than k scores exceed its
    own), and an out-of-range target or a non-finite score is never in.
    """
    xp = predictions.xp
    scores, classes = predictions.data, predictions.shape[-1]
    valid = (targets >= 0) & (targets < classes)
    target_scores = xp.take_along_axis(scores, xp.where(valid, targets, 0)[..., None], axis=-1)
    higher = (scores > target_scores).sum(axis=-1)
    return valid & (higher < k) & xp.isfinite(target_scores[..., 0])


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the class of one-hot ``y_true`` is among the ``k`` largest of ``y_pred``."""
    name = 'top_k_categorical_accuracy'
    _check_k(name, k)
    y_true, y_pred = prepare(name, y_true, y_pred)
    targets = y_pred.xp.argmax(y_true.data, axis=-1)
    return _values(_in_top_k(y_pred, targets, k), y_pred)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the class index ``y_true`` is among the ``k`` largest of ``y_pred``."""
    name = 'sparse_top_k_categorical_accuracy'
    _check_k(name, k)
    y_pred = prediction(name, y_pred)
    labels = sparse_labels(name, y_true, y_pred)
    return _values(_in_top_k(y_pred, labels.data, k), y_pred)


class Accuracy(MeanMetricWrapper):
    """How often ``y_pred`` equals ``y_true``, elementwise (:func:`accuracy`)."""

    def __init__(self, name='accuracy', dtype=None):
        super().__init__(accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often thresholded predictions match binary labels (:func:`binary_accuracy`)."""

    def __init__(self, name='binary_accuracy', dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name, dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class matches one-hot labels (:func:`categorical_accuracy`)."""

    def __init__(self, name='categorical_accuracy', dtype=None):
        super().__init__(categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class matches class indices (:func:`sparse_categorical_accuracy`)."""

    def __init__(self, name='sparse_categorical_accuracy', dtype=None):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often one-hot labels are in the top ``k`` predictions."""

    def __init__(self, k=5, name='top_k_categorical_accuracy', dtype=None):
        _check_k(type(self).__name__, k)
        super().__init__(top_k_categorical_accuracy, name, dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often class indices are in the top ``k`` predictions."""

    def __init__(self, k=5, name='sparse_top_k_categorical_accuracy', dtype=None):
        _check_k(type(self).__name__, k)
        super().__init__(sparse_top_k_categorical_accuracy, name, dtype, k=k)
