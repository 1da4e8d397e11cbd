"""K.ctc_decode (Keras 2.2.4's conventions: blank last, -1 padding, TensorFlow's scores),
against hand-computed paths, a brute-force sum over every alignment, and PyTorch's CTC loss."""

import itertools
import math

import numpy as np
import pytest

from minidl import backend as K

EPS = K.epsilon()


def _softmax(scores):
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype('float32')


def test_greedy_merges_repeats_drops_blanks_and_pads_with_minus_one():
    blank = 2
    y_pred = np.full((2, 5, 3), 0.1, 'float32')
    # Sample 0: best classes 1 1 0 blank 0 -> labels 1 0 0 (the blank separates the two 0s).
    for frame, (cls, p) in enumerate([(1, .8), (1, .8), (0, .7), (blank, .8), (0, .6)]):
        y_pred[0, frame] = (1 - p) / 2
        y_pred[0, frame, cls] = p
    # Sample 1: only its first two frames count; best classes 0 0 -> label 0.
    y_pred[1, :, 0] = 0.8
    (decoded,), log_prob = K.ctc_decode(y_pred, np.array([5, 2]))
    np.testing.assert_array_equal(K.eval(decoded), [[1, 0, 0], [0, -1, -1]])
    assert K.eval(decoded).dtype == np.int64
    # TensorFlow's greedy score: minus the sum of each step's largest log(y + eps).
    want = [-sum(math.log(p + EPS) for p in (.8, .8, .7, .8, .6)), -2 * math.log(.8 + EPS)]
    np.testing.assert_allclose(K.eval(log_prob), np.array(want)[:, None], rtol=1e-6)


def _collapse(path, blank):
    return tuple(label for label, _ in itertools.groupby(path) if label != blank)


def _brute_force(probabilities, blank):
    """Every labelling's probability: the sum over all alignments that spell it."""
    totals = {}
    steps, classes = probabilities.shape
    for path in itertools.product(range(classes), repeat=steps):
        p = np.prod([probabilities[t, c] for t, c in enumerate(path)])
        totals[_collapse(path, blank)] = totals.get(_collapse(path, blank), 0.0) + p
    return sorted(totals.items(), key=lambda item: -item[1])


def test_beam_search_with_a_wide_beam_is_exact():
    rng = np.random.default_rng(0)
    y_pred = _softmax(2 * rng.standard_normal((2, 5, 3)))
    lengths = np.array([5, 4])
    decoded, log_prob = K.ctc_decode(y_pred, lengths, greedy=False, beam_width=64, top_paths=3)
    assert len(decoded) == 3 and K.int_shape(log_prob) == (2, 3)
    for sample in range(2):
        # The decoder sees log(y + eps), so the brute force sums (y + eps) products too.
        truth = _brute_force(y_pred[sample, :lengths[sample]].astype(np.float64) + EPS, 2)
        for path in range(3):
            labels = [int(v) for v in K.eval(decoded[path])[sample] if v != -1]
            assert tuple(labels) == truth[path][0]
            np.testing.assert_allclose(K.eval(log_prob)[sample, path],
                                       math.log(truth[path][1]), rtol=1e-5)


def test_beam_log_probability_is_minus_the_ctc_loss():
    torch = pytest.importorskip('torch')
    y_pred = _softmax(3 * np.random.default_rng(1).standard_normal((1, 8, 4)))
    decoded, log_prob = K.ctc_decode(y_pred, np.array([8]), greedy=False, beam_width=200)
    labels = K.eval(decoded[0])[0]
    loss = torch.nn.functional.ctc_loss(
        torch.tensor(np.log(y_pred.astype(np.float64) + EPS)).permute(1, 0, 2),
        torch.tensor(labels[None]), torch.tensor([8]), torch.tensor([len(labels)]),
        blank=3, reduction='none')
    # Not normalised: log(y + eps) sums to slightly above 1 per step, in both.
    np.testing.assert_allclose(K.eval(log_prob)[0, 0], -loss.item(), rtol=1e-4)


def test_arguments_are_checked():
    y_pred = np.full((1, 3, 3), 1 / 3, 'float32')
    with pytest.raises(ValueError, match='input_length'):
        K.ctc_decode(y_pred, np.array([4]))
    with pytest.raises(ValueError, match='top_paths'):
        K.ctc_decode(y_pred, np.array([3]), greedy=False, beam_width=2, top_paths=3)
    (decoded,), _ = K.ctc_decode(y_pred, np.array([0]))
    assert K.int_shape(decoded) == (1, 0)
