"""Losses between probability distributions: cross-entropies, KL divergence, Poisson.

Cross-entropy of probabilities follows Keras 2: probabilities are clipped to
``[1e-7, 1 - 1e-7]`` before the logarithm. When ``y_pred`` came out of a
softmax (over the last axis) or a sigmoid that recorded its logits
(``y_pred._keras_logits``), the loss is computed from those logits by one
fused, stable function instead, as Keras does with its TensorFlow backend:
it is faster and exact where the clipped probabilities would saturate.
"""

import minidl.functions as F
from minidl.layers.operation import recordable
from minidl.losses.inputs import (
    EPSILON, check_label_smoothing, prediction, prepare, recorded_logits, sparse_labels)


@recordable
def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """Cross-entropy of one-hot (or probability) targets, per sample.

    Args:
        y_true: Targets of the shape of ``y_pred``.
        y_pred: Class probabilities (rescaled to sum to one, then clipped to
            ``[1e-7, 1 - 1e-7]``, as Keras 2 does), or logits.
        from_logits: Whether ``y_pred`` holds logits.
        label_smoothing: In [0, 1]; targets become ``y * (1 - s) + s / classes``.

    Returns:
        A Tensor of shape ``y_pred.shape[:-1]``.
    """
    name = 'categorical_crossentropy'
    check_label_smoothing(name, label_smoothing)
    y_true, y_pred = prepare(name, y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1 - label_smoothing) + label_smoothing / y_pred.shape[-1]
    logits = y_pred if from_logits else recorded_logits(y_pred, 'softmax')
    if logits is not None:
        return F.softmax_cross_entropy(y_true, logits)
    probabilities = F.clip(y_pred / F.sum(y_pred, axis=-1, keepdims=True), EPSILON, 1 - EPSILON)
    return -F.sum(y_true * F.log(probabilities), axis=-1)


@recordable
def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    """Cross-entropy of integer class labels, per sample.

    Args:
        y_true: Class indices (integers, or floats holding integers) of shape
            ``y_pred.shape[:-1]``, or with a trailing axis of size one.
        y_pred: Class probabilities (clipped to ``[1e-7, 1 - 1e-7]``), or logits.
        from_logits: Whether ``y_pred`` holds logits.

    Returns:
        A Tensor of shape ``y_pred.shape[:-1]``.

    Raises:
        ValueError: If a label lies outside ``[0, classes)``.
    """
    name = 'sparse_categorical_crossentropy'
    y_pred = prediction(name, y_pred)
    labels = sparse_labels(name, y_true, y_pred)
    logits = y_pred if from_logits else recorded_logits(y_pred, 'softmax')
    if logits is None:
        # Keras takes the log of the clipped probabilities as logits; their softmax renormalizes.
        logits = F.log(F.clip(y_pred, EPSILON, 1 - EPSILON))
    return F.softmax_cross_entropy(labels, logits)


@recordable
def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """Binary cross-entropy averaged over the last axis.

    Args:
        y_true: Targets in [0, 1] of the shape of ``y_pred``.
        y_pred: Probabilities (clipped to ``[1e-7, 1 - 1e-7]``), or logits.
        from_logits: Whether ``y_pred`` holds logits.
        label_smoothing: In [0, 1]; targets become ``y * (1 - s) + s / 2``.

    Returns:
        A Tensor of shape ``y_pred.shape[:-1]``.
    """
    name = 'binary_crossentropy'
    check_label_smoothing(name, label_smoothing)
    y_true, y_pred = prepare(name, y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1 - label_smoothing) + 0.5 * label_smoothing
    logits = y_pred if from_logits else recorded_logits(y_pred, 'sigmoid')
    if logits is not None:
        return F.binary_cross_entropy(y_true, logits, from_logits=True)
    return F.binary_cross_entropy(y_true, y_pred)


@recordable
def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred))`` over the last axis, both clipped to [1e-7, 1]."""
    y_true, y_pred = prepare('kl_divergence', y_true, y_pred)
    y_true, y_pred = F.clip(y_true, EPSILON, 1.0), F.clip(y_pred, EPSILON, 1.0)
    return F.sum(y_true * F.log(y_true / y_pred), axis=-1)


@recordable
def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + 1e-7))`` over the last axis."""
    y_true, y_pred = prepare('poisson', y_true, y_pred)
    return F.mean(y_pred - y_true * F.log(y_pred + EPSILON), axis=-1)


kld = KLD = kullback_leibler_divergence = kl_divergence
