"""Connectionist temporal classification (Graves et al. 2006) as a loss for ``compile``.

``y_true`` holds each sample's labels first, then padding: its label length
is the number of entries before the first one <= 0. ``y_pred`` is
``(batch, frames, classes)``, class 0 being the blank; its input lengths are
the True steps of its mask (``y_pred._keras_mask``, which a masked model's
output carries), or all frames without one. So a model whose output is
masked trains on padded batches with ``compile(loss='ctc')`` and nothing
else. The loss reads the mask itself: a training loop must not weight its
per-sample values by the mask again (:attr:`~minidl.losses.Loss.consumes_mask`).
"""

import numpy as np

import minidl.functions as F
from minidl.compute import to_numpy
from minidl.losses.base import LossFunctionWrapper, Reduction
from minidl.losses.inputs import EPSILON, prediction, recorded_logits
from minidl.tensor import Tensor


def ctc(y_true, y_pred, from_logits=False):
    """CTC negative log-likelihood of each sample (not divided by its label length).

    Args:
        y_true: Labels ``(batch, max_label_length)``, integers or floats, in
            ``1..classes-1`` before each row's first value <= 0.
        y_pred: ``(batch, frames, classes)`` probabilities (their log is taken
            after clipping at 1e-7; a softmax's own logits where it recorded
            them), or logits with ``from_logits``.
        from_logits: Whether ``y_pred`` holds logits.

    Returns:
        A Tensor of shape ``(batch,)``; +inf for a sample too short for its labels.

    Raises:
        ValueError: For a mask that is not a prefix (True steps, then False
            ones) of each sample, or labels out of range.
    """
    y_pred = prediction('ctc', y_pred)
    if y_pred.ndim != 3:
        raise ValueError(f'ctc: y_pred must be (batch, frames, classes), got shape {y_pred.shape}')
    labels = to_numpy(y_true.data if isinstance(y_true, Tensor) else np.asarray(y_true))
    if labels.ndim != 2 or labels.shape[0] != y_pred.shape[0]:
        raise ValueError(f'ctc: y_true must be labels ({y_pred.shape[0]}, max_label_length) for '
                         f'y_pred of shape {y_pred.shape}, got shape {labels.shape}')
    ended = labels <= 0
    label_lengths = np.where(ended.any(axis=1), ended.argmax(axis=1), labels.shape[1])
    labels = np.where(np.arange(labels.shape[1]) < label_lengths[:, None], labels, 0)
    logits = y_pred if from_logits else _log_probabilities(y_pred)
    return F.ctc_loss(labels.astype(np.int64), logits, input_lengths(y_pred), label_lengths)


ctc.consumes_mask = True


def input_lengths(y_pred):
    """Frames of each sample: the True steps of ``y_pred``'s prefix mask, or all frames."""
    mask = getattr(y_pred, '_keras_mask', None)
    batch, frames = y_pred.shape[:2]
    if mask is None:
        return np.full(batch, frames, np.int64)
    mask = to_numpy(mask.data if isinstance(mask, Tensor) else mask).astype(bool)
    if mask.shape != (batch, frames):
        raise ValueError(f'ctc: the mask of y_pred has shape {mask.shape}, expected '
                         f'{(batch, frames)}')
    lengths = mask.sum(axis=1)
    if not np.array_equal(mask, np.arange(frames) < lengths[:, None]):
        raise ValueError('ctc: the mask of y_pred must be a prefix mask (each sample\'s valid '
                         'frames first, then its padding); CTC cannot skip frames inside a '
                         'sequence')
    return lengths.astype(np.int64)


def _log_probabilities(y_pred):
    logits = recorded_logits(y_pred, 'softmax')
    if logits is not None:
        return logits  # log_softmax of these is the log of y_pred, computed stably
    return F.log(F.clip(y_pred, EPSILON, 1.0))


class CTC(LossFunctionWrapper):
    """Loss class of :func:`ctc`: per-sample CTC, reduced over the batch.

    Args:
        from_logits: Whether ``y_pred`` holds logits rather than probabilities.
        reduction: As for :class:`~minidl.losses.Loss`.
        name: The loss's name.
    """

    consumes_mask = True

    def __init__(self, from_logits=False, reduction=Reduction.AUTO, name='ctc'):
        super().__init__(ctc, reduction, name, from_logits=from_logits)
