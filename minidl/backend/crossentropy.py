"""Keras's backend cross-entropies, elementwise or along the class axis, and CTC.

Unlike the losses of :mod:`minidl.losses`, these reduce nothing but the class
axis (the binary one reduces nothing), and they clip probabilities with
:func:`~minidl.backend.config.epsilon`.
"""

import numpy as np

import minidl.functions as F
from minidl.backend.config import epsilon
from minidl.backend.convert import as_tensor, wrap
from minidl.layers.operation import recordable


@recordable
def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy between target distributions and predictions along ``axis``.

    Args:
        target: Probabilities (one-hot vectors) of the shape of ``output``.
        output: Probabilities (rescaled to sum to one, then clipped to
            ``[eps, 1 - eps]``), or logits with ``from_logits``.
        from_logits: Whether ``output`` holds logits.
        axis: The class axis.

    Returns:
        The losses, of the shape of ``output`` without ``axis``.
    """
    output = as_tensor(output)
    target = as_tensor(target, output.dtype)
    if from_logits:
        return F.softmax_cross_entropy(target, output, axis)
    output = output / F.sum(output, axis=axis, keepdims=True)
    output = F.clip(output, epsilon(), 1 - epsilon())
    return -F.sum(target * F.log(output), axis=axis)


@recordable
def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer class labels against predictions along ``axis``.

    Args:
        target: Class indices; any shape with as many elements as ``output``
            has samples (e.g. (batch,) or (batch, 1)).
        output: Probabilities (clipped to ``[eps, 1 - eps]``), or logits
            with ``from_logits``.
        from_logits: Whether ``output`` holds logits.
        axis: The class axis.

    Returns:
        The losses, of the shape of ``output`` without ``axis``.
    """
    output = as_tensor(output)
    axis %= output.ndim
    if axis != output.ndim - 1:
        order = [a for a in range(output.ndim) if a != axis] + [axis]
        output = F.transpose(output, order)
    logits = output if from_logits else F.log(F.clip(output, epsilon(), 1 - epsilon()))
    labels = as_tensor(target).data.reshape(logits.shape[:-1]).astype(np.int64)
    return F.softmax_cross_entropy(wrap(labels), logits)


@recordable
def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy.

    Args:
        target: Targets in [0, 1], of the shape of ``output``.
        output: Probabilities (clipped to ``[eps, 1 - eps]``), or logits
            with ``from_logits``.
        from_logits: Whether ``output`` holds logits.
    """
    output = as_tensor(output)
    target = as_tensor(target, output.dtype)
    if from_logits:
        logits = output
    else:
        output = F.clip(output, epsilon(), 1 - epsilon())
        logits = F.log(output / (1 - output))
    # max(x, 0) - x z + log(1 + exp(-|x|)): the logistic loss without overflow.
    return F.relu(logits) - logits * target + F.softplus(-F.abs(logits))


@recordable
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """CTC loss of each sample, with Keras's conventions.

    Args:
        y_true: (batch, max_label_length) integer labels in [0, classes - 1]; as in
            TensorFlow, a label may be the blank (classes - 1).
        y_pred: (batch, steps, classes) softmax outputs; the last class is the blank.
        input_length: (batch, 1) number of valid steps of each sample.
        label_length: (batch, 1) number of labels of each sample.

    Returns:
        A (batch, 1) Tensor of losses.
    """
    y_pred = as_tensor(y_pred)
    log_probabilities = F.log(y_pred + epsilon())
    # minidl's CTC takes the blank as class 0: rotate the classes by one.
    logits = F.concat([log_probabilities[..., -1:], log_probabilities[..., :-1]], axis=-1)
    # Keras's blank, classes - 1, becomes 0 (padding past the lengths may hold anything).
    labels = _integers(y_true) + 1
    labels[labels == log_probabilities.shape[-1]] = 0
    losses = F.ctc_loss(labels, logits, _integers(input_length).reshape(-1),
                        _integers(label_length).reshape(-1), blank_labels=True)
    return F.expand_dims(losses, 1)


def _integers(value):
    return np.asarray(as_tensor(value).numpy()).astype(np.int64)
