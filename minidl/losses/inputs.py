"""Conversion and checking of ``(y_true, y_pred)``, shared by every loss function.

``y_true`` may be a Tensor, an array or nested numbers, of integer or
floating type; it is converted to ``y_pred``'s dtype and device. A ``y_true``
of shape ``y_pred.shape[:-1]`` matches a ``y_pred`` whose last axis has size
one, and the other way round (Keras's squeeze-or-expand rule), so targets of
shape ``(batch,)`` work with an output of shape ``(batch, 1)``.
"""

import numpy as np

import minidl.functions as F
from minidl.tensor import Tensor

# Keras's backend epsilon(), which keeps logarithms and divisions finite.
EPSILON = 1e-7


def prediction(name, y_pred):
    """``y_pred`` as a floating Tensor of at least one dimension."""
    if not isinstance(y_pred, Tensor):
        y_pred = Tensor(y_pred)
    if y_pred.dtype.kind != 'f':
        raise TypeError(f'{name}: y_pred must be floating, got {y_pred.dtype}')
    if y_pred.ndim == 0:
        raise ValueError(f'{name}: y_pred must have at least one axis, got a scalar')
    return y_pred


def labels_like(name, y_true, y_pred):
    """``y_true`` as a Tensor of ``y_pred``'s device, dtype and shape."""
    if not isinstance(y_true, Tensor) or y_true.device != y_pred.device:
        y_true = Tensor(y_true, dtype=y_pred.dtype, device=y_pred.device)
    elif y_true.dtype != y_pred.dtype:
        y_true = F.cast(y_true, y_pred.dtype)
    if y_true.shape == y_pred.shape:
        return y_true
    if y_true.shape == y_pred.shape[:-1] and y_pred.shape[-1:] == (1,):
        return F.expand_dims(y_true, -1)
    if y_true.shape[:-1] == y_pred.shape and y_true.shape[-1:] == (1,):
        return F.squeeze(y_true, -1)
    raise ValueError(f'{name}: y_true of shape {y_true.shape} does not match y_pred of shape '
                     f'{y_pred.shape}')


def prepare(name, y_true, y_pred):
    """``(y_true, y_pred)`` as Tensors of one dtype, device and shape."""
    y_pred = prediction(name, y_pred)
    return labels_like(name, y_true, y_pred), y_pred


def sparse_labels(name, y_true, y_pred):
    """Class indices (int64) of shape ``y_pred.shape[:-1]``, from integers or floats.

    A trailing axis of size one is dropped; floats are truncated, as Keras casts them.
    """
    labels = Tensor(y_true, dtype=np.int64, device=y_pred.device)
    if labels.shape == y_pred.shape[:-1] + (1,):
        labels = Tensor.wrap(labels.data.reshape(y_pred.shape[:-1]))
    if labels.shape != y_pred.shape[:-1]:
        raise ValueError(f'{name}: sparse labels need shape {y_pred.shape[:-1]} (or with a '
                         f'trailing 1) for y_pred of shape {y_pred.shape}, got y_true of shape '
                         f'{labels.shape}')
    return labels


def recorded_logits(y_pred, kind):
    """The logits that a ``kind`` ('softmax' or 'sigmoid') activation recorded on ``y_pred``.

    ``minidl.activations`` sets ``y_pred._keras_logits = (logits, kind)`` on
    the outputs of softmax (over the last axis) and sigmoid; None if absent
    or of another kind.
    """
    recorded = getattr(y_pred, '_keras_logits', None)
    if recorded is not None and recorded[1] == kind:
        return recorded[0]
    return None


def check_label_smoothing(name, label_smoothing):
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f'{name}: label_smoothing must lie in [0, 1], got {label_smoothing}')
