"""Connectionist temporal classification (CTC) loss, Graves et al. 2006.

The loss of a sample is ``-log p(labels | logits)``, summed over every
alignment of its labels to its frames: the extended sequence (blank, l1, blank,
l2, ..., blank), of length L = 2S + 1, is walked left to right, one position
per frame, staying, stepping by one, or skipping the blank between two
different labels.

The forward variables alpha are computed in log space with a Python loop over
frames only, vectorised over samples and positions. When the gradient is
needed, the backward variables beta come from the same loop: beta is alpha of
the problem reversed in time and in label positions, so the reversed problems
are stacked under the others. Unreachable states hold the finite sentinel
``_impossible(dtype)`` rather than -inf, so that the log-sum-exp of unreachable
states needs no special case and never makes a NaN. The gradient sums the
posterior occupation of the positions per class with a one-hot matrix product
(no scatter-add), so results are deterministic.
"""

import numpy as np

from minidl.compute import is_array, to_numpy
from minidl.functions.activation import _log_softmax_parts
from minidl.tensor import Function, Tensor


def _impossible(dtype):
    # A quarter of the most negative float: two of them (alpha + beta) still add up finitely.
    return dtype.type(np.finfo(dtype).min / 4)


class CTCLoss(Function):
    """Per-sample CTC negative log-likelihood of unnormalised logits (N, T, C); blank is 0.

    The labels (N, S) and lengths (N,) are integer numpy arrays, checked by ``ctc_loss``.
    """

    def __init__(self, labels, input_lengths, label_lengths):
        self.labels, self.input_lengths, self.label_lengths = labels, input_lengths, label_lengths

    def forward(self, logits):
        xp = self.xp
        batch, frames, _ = logits.shape
        input_lengths, label_lengths = self.input_lengths, self.label_lengths
        # Extended label sequences (blank, l1, blank, ..., blank), blanks past each length.
        labels = np.where(np.arange(self.labels.shape[1]) < label_lengths[:, None], self.labels, 0)
        extended = np.zeros((batch, 2 * labels.shape[1] + 1), np.int64)
        extended[:, 1::2] = labels
        self.extended = xp.asarray(extended)
        length = extended.shape[1]
        # Class-major (C, N, T): reductions over the classes are elementwise operations on
        # long rows (numpy reduces many short rows slowly), and gathering positions reads rows
        # of T. Out of place, as the contiguous array may be a view of the caller's logits.
        log_probs, log_total, self.softmax = _log_softmax_parts(
            xp, xp.ascontiguousarray(xp.moveaxis(logits, 2, 0)), 0, self.needs_input_grad[0])
        log_probs -= log_total

        # With a gradient to compute, the beta recursion runs in the same loop as alpha's:
        # beta is the alpha of the time- and label-reversed problems, which enter at frame
        # T - input_length and position L - 1 - 2 label_length of their reversed axes.
        starts = [(np.zeros(batch, np.int64), np.zeros(batch, np.int64))]
        skip = _skips(extended)
        if self.needs_input_grad[0]:
            starts.append((frames - input_lengths, length - 1 - 2 * label_lengths))
            # A reversed problem's skip onto s' is the original skip from L - 1 - s' onto
            # L + 1 - s', which the label at L + 1 - s' (not at s') allows: they differ
            # where a label is the blank (blank_labels).
            backward = np.zeros_like(skip)
            backward[:, 2:] = skip[:, ::-1][:, :-2]
            skip = np.concatenate([skip, backward])
        emissions = xp.empty((frames, len(starts) * batch, length), logits.dtype)
        # Log-probability of each extended position at each frame, gathered as rows of T.
        gathered = log_probs[self.extended, xp.arange(batch)[:, None]]  # (N, L, T)
        emissions[:, :batch] = gathered.transpose(2, 0, 1)
        if self.needs_input_grad[0]:
            emissions[:, batch:] = gathered[:, ::-1, ::-1].transpose(2, 0, 1)
        self.emissions = emissions[:, :batch]
        start_frames, start_positions = (np.concatenate(values) for values in zip(*starts))
        self.log_alpha = _log_alpha(xp, emissions, skip, start_frames, start_positions)

        # Alignments end on the last label or the blank after it, at the last valid frame.
        impossible = _impossible(logits.dtype)
        rows, lengths = xp.arange(batch), xp.asarray(label_lengths)
        final = self.log_alpha[xp.asarray(input_lengths - 1), rows]  # (N, L)
        last_label = xp.where(lengths > 0, final[rows, 2 * lengths - 1], impossible)
        log_likelihood = xp.logaddexp(final[rows, 2 * lengths], last_label)
        self.possible = log_likelihood > impossible / 2
        self.log_likelihood = xp.where(self.possible, log_likelihood, 0)
        return xp.where(self.possible, -log_likelihood, xp.inf).astype(logits.dtype, copy=False)

    def backward(self, grad):
        xp, batch = self.xp, len(grad)
        classes, _, frames = self.softmax.shape
        # The reversed problems' alpha, turned back in time and positions, is beta.
        log_alpha = self.log_alpha[:, :batch]
        log_beta = self.log_alpha[::-1, batch:, ::-1]
        # Posterior occupation of each position: alpha and beta both hold the emission.
        occupation = log_alpha + log_beta
        occupation -= self.emissions
        occupation -= self.log_likelihood[:, None]
        xp.exp(occupation, out=occupation)
        one_hot = (self.extended[:, :, None] == xp.arange(classes)).astype(occupation.dtype)
        expected = occupation.transpose(1, 0, 2) @ one_hot  # (N, T, C): summed per class
        grad_logits = xp.subtract(self.softmax.transpose(1, 2, 0), expected, out=expected)
        # Frames past the input length and samples with no alignment get no gradient.
        weight = xp.where(self.possible, grad, 0)[:, None] * (
            xp.arange(frames) < xp.asarray(self.input_lengths)[:, None])
        grad_logits *= weight[:, :, None].astype(grad_logits.dtype, copy=False)
        return grad_logits


def _skips(extended):
    """(N, L) bool: whether position s may be reached from s - 2, skipping a blank.

    Only onto a label that is not the blank and differs from the label at
    s - 2 (TensorFlow's rule, which also covers a label that is the blank).
    """
    skip = np.zeros_like(extended, dtype=bool)
    skip[:, 2:] = (extended[:, 2:] != 0) & (extended[:, 2:] != extended[:, :-2])
    return skip


def _log_alpha(xp, emissions, skip, start_frames, start_positions):
    """Log forward variables (T, R, L) of R problems, each starting at its own frame.

    Problem r is unreachable before frame ``start_frames[r]``, where it enters at
    ``start_positions[r]`` and the position after it; ``skip`` (R, L) says which
    positions may be reached from two before (:func:`_skips`).
    """
    frames, rows, length = emissions.shape
    dtype = emissions.dtype
    impossible = _impossible(dtype)
    # The problems lie side by side in one flat row per frame, so that a step is a few
    # operations on long contiguous arrays (their cost is mostly per call). Position s takes
    # the log-sum-exp of its predecessors s - 2, s - 1 and s, shifted by the largest one.
    # Additive masks rule out predecessors in the previous problem, and the skips not allowed.
    masks = np.zeros((3, rows, length), dtype)
    masks[0][~skip] = impossible
    masks[1, :, 0] = impossible
    masks = xp.asarray(masks.reshape(3, -1))
    emissions = emissions.reshape(frames, -1)

    # state[t + 1, 2:] holds frame t; state[0] is the frame before the first, and the first
    # two columns are the unreachable predecessors of the first position.
    state = xp.full((frames + 1, 2 + rows * length), impossible, dtype)
    predecessors = xp.moveaxis(
        xp.lib.stride_tricks.sliding_window_view(state, 3, axis=1), 2, 1)  # (T + 1, 3, R L)
    # A problem enters through a state of log-probability 0 at its start position, one
    # frame before its start frame; that state is made unreachable again afterwards.
    entries = {}
    for row, (time, position) in enumerate(zip(start_frames.tolist(), start_positions.tolist())):
        entries.setdefault(time, []).append(2 + row * length + position)
    entries = {time: xp.asarray(columns) for time, columns in entries.items()}

    candidates = xp.empty(predecessors.shape[1:], dtype)
    largest = xp.empty(candidates.shape[1:], dtype)
    total = xp.empty(candidates.shape[1:], dtype)
    two_back, one_back, same = candidates
    # The loop's time is mostly per-call overhead: bind the functions once, iterate views.
    add, maximum, subtract, exp, log = xp.add, xp.maximum, xp.subtract, xp.exp, xp.log
    for t, (previous, emission, current) in enumerate(zip(predecessors, emissions, state[1:, 2:])):
        if t in entries:
            state[t, entries[t]] = 0
        add(previous, masks, out=candidates)
        maximum(two_back, one_back, out=largest)
        maximum(largest, same, out=largest)
        subtract(candidates, largest, out=candidates)
        exp(candidates, out=candidates)
        add(two_back, one_back, out=total)
        add(total, same, out=total)
        log(total, out=total)
        add(total, largest, out=total)
        add(total, emission, out=current)
    for time, columns in entries.items():
        state[time, columns] = impossible
    return state[1:, 2:].reshape(frames, rows, length)


def ctc_loss(labels, logits, input_lengths, label_lengths, blank_labels=False):
    """CTC negative log-likelihood of each sample, with blank = class 0.

    ``logits`` are unnormalised: the log-softmax over classes is part of the
    loss. A sample whose labels cannot be aligned to its input (too few
    frames for its labels and the blanks required between repeated ones) gets
    a loss of +inf, as PyTorch's ``ctc_loss`` with ``zero_infinity=False``,
    and a zero gradient.

    Args:
        labels: Integer labels (N, S) in 1..C-1 (0..C-1 with ``blank_labels``),
            padded past each label length with any value.
        blank_labels: Accept the blank as a label, as TensorFlow's CTC (and so
            Keras 2's ``K.ctc_batch_cost``) does: it takes a position of its own
            in the alignment, which only blank frames fill and no skip reaches.
            Keras's image_ocr example labels its empty images this way.
        logits: Floating tensor (N, T, C).
        input_lengths: Number of valid frames of each sample (N,), in 1..T.
        label_lengths: Number of labels of each sample (N,), in 0..S.

    Returns:
        The loss of each sample, shape (N,), in the dtype of ``logits``.
    """
    if not isinstance(logits, Tensor) and not is_array(logits):
        logits = Tensor(logits)
    shape = tuple(logits.shape)
    if logits.dtype.kind != 'f':
        raise TypeError(f'ctc_loss: logits must be floating, got {logits.dtype}')
    labels, input_lengths, label_lengths = (
        _host_integers(value, name) for value, name in
        ((labels, 'labels'), (input_lengths, 'input_lengths'), (label_lengths, 'label_lengths')))
    if len(shape) != 3:
        raise ValueError(f'ctc_loss: logits must be (batch, frames, classes), got shape {shape}')
    batch, frames, classes = shape
    if batch == 0 or frames == 0:
        raise ValueError(f'ctc_loss needs at least one sample and one frame, got logits {shape}')
    if labels.ndim != 2 or labels.shape[0] != batch:
        raise ValueError(f'ctc_loss: labels must be ({batch}, max_label_length) for logits '
                         f'{shape}, got shape {labels.shape}')
    for name, lengths, low, high in (('input_lengths', input_lengths, 1, frames),
                                     ('label_lengths', label_lengths, 0, labels.shape[1])):
        if lengths.shape != (batch,):
            raise ValueError(f'ctc_loss: {name} must have shape ({batch},), got {lengths.shape}')
        if lengths.size and (lengths.min() < low or lengths.max() > high):
            raise ValueError(f'ctc_loss: {name} must lie in [{low}, {high}], got '
                             f'{lengths.min()}..{lengths.max()}')
    used = np.arange(labels.shape[1]) < label_lengths[:, None]
    lowest = 0 if blank_labels else 1
    if used.any() and (labels[used].min() < lowest or labels[used].max() >= classes):
        raise ValueError(f'ctc_loss: labels must lie in [{lowest}, {classes - 1}] (0 is the '
                         f'blank), got {labels[used].min()}..{labels[used].max()}')
    return CTCLoss(labels, input_lengths, label_lengths)(logits)


def _host_integers(value, name):
    array = to_numpy(value.data if isinstance(value, Tensor) else value)
    array = np.asarray(array)
    if array.dtype.kind not in 'iu':
        raise TypeError(f'ctc_loss: {name} must be integers, got {array.dtype}')
    return array.astype(np.int64, copy=False)
