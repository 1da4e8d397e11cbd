"""Decoding a CTC model's per-frame log-probabilities: best path and prefix beam search.

The one implementation of both searches in the project: ``K.ctc_decode``
(Keras 2's conventions, blank last) and ``zoo.speech.decoding`` (texts,
blank first, a character language model through the hooks of
:func:`prefix_beam_search`) call these. They work on one sample's
``(frames, classes)`` numpy array of log-probabilities, on the host: a
search is sequential, branching Python work, not array work.
"""

import math

import numpy as np

_NEG_INF = float('-inf')


def best_path(log_probs, blank):
    """Greedy (best-path) decoding of one sample.

    The most likely class of each frame, repeats merged, blanks dropped.
    Ties go to the lowest class index.

    Args:
        log_probs: ``(frames, classes)`` array (probabilities or logits work
            too: only the argmax matters).
        blank: Index of the blank class.

    Returns:
        ``(labels, score)``: an int64 array of the labels, and the sum over
        frames of each frame's largest value (the best path's
        log-probability for log-probabilities).
    """
    best = np.argmax(log_probs, axis=-1)
    # A class is written where it differs from the frame before (repeats merge), unless blank.
    changed = np.ones(len(best), bool)
    changed[1:] = best[1:] != best[:-1]
    labels = best[changed]
    score = float(np.sum(np.take_along_axis(log_probs, best[:, None], axis=-1)))
    return labels[labels != blank].astype(np.int64), score


def logsumexp(a, b):
    """``log(exp(a) + exp(b))`` of two floats, exact for -inf."""
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


def prefix_beam_search(log_probs, blank, beam_width, allowed=None, extension_score=None,
                       final_score=None, symbols=None):
    """CTC prefix beam search over one sample's frames.

    Keeps, frame by frame, the ``beam_width`` best prefixes (label
    sequences). Each holds the log-probability of the alignments of the
    frames read that write it and end in a blank, and of those that end in
    its last label. A label equal to a prefix's last one extends it only
    from alignments ending in a blank; otherwise it merges into the prefix.
    Alignments writing the same prefix are summed (Hannun et al. 2014).

    A prefix is a string with one symbol per label: strings hash once and
    concatenate in C, which keeps the search as fast as the text decoder it
    came from (tuples of labels made it 2.5 times slower).

    Args:
        log_probs: ``(frames, classes)`` float array of log-probabilities.
        blank: Index of the blank class.
        beam_width: Prefixes kept after each frame (``>= 1``).
        allowed: Optional boolean ``(frames, classes)``: labels that may
            extend prefixes at each frame (the blank always counts).
        extension_score: Optional ``f(prefix, label) -> float`` added once
            to a prefix's ranking score when ``label`` is first appended to
            ``prefix`` (a language model's term).
        final_score: Optional ``f(prefix) -> float`` added to the ranking
            after the last frame.
        symbols: The distinct one-character string of each class (a text's
            characters); by default ``chr(label)``, so that
            :func:`labels_of` gives the labels back.

    Returns:
        A list of ``(prefix, ctc_log_prob, score)``, best first, for every
        prefix in the final beam: ``ctc_log_prob`` is the prefix's CTC
        log-probability within the beam, ``score`` that plus the hooks'
        terms (what the ranking used). Equal scores are ordered by the
        prefix string, so results never depend on dict order.
    """
    classes = log_probs.shape[-1]
    symbols = symbols or [chr(label) for label in range(classes)]
    beams = {'': [0.0, _NEG_INF]}  # prefix -> [log P(ending in blank), log P(ending in a label)]
    extra = {'': 0.0}  # prefix -> sum of extension_score over its labels, filled on creation
    for frame_index, frame in enumerate(log_probs):
        candidates = [c for c in range(classes) if c != blank
                      and (allowed is None or allowed[frame_index, c])]
        following = {}
        for prefix, (ends_blank, ends_label) in beams.items():
            total = logsumexp(ends_blank, ends_label)
            entry = following.setdefault(prefix, [_NEG_INF, _NEG_INF])
            entry[0] = logsumexp(entry[0], total + frame[blank])
            last = prefix[-1:]
            for label in candidates:
                symbol = symbols[label]
                extended = prefix + symbol
                target = following.setdefault(extended, [_NEG_INF, _NEG_INF])
                if symbol == last:
                    # The same label again: only after a blank is it written twice;
                    # right after itself it merges into the prefix.
                    target[1] = logsumexp(target[1], ends_blank + frame[label])
                    entry[1] = logsumexp(entry[1], ends_label + frame[label])
                else:
                    target[1] = logsumexp(target[1], total + frame[label])
                if extended not in extra:
                    extra[extended] = extra[prefix] + (
                        extension_score(prefix, label) if extension_score else 0.0)
        ranked = sorted(following.items(), key=lambda item: (
            -(logsumexp(*item[1]) + extra[item[0]]), item[0]))
        beams = dict(ranked[:beam_width])

    results = []
    for prefix, probabilities in beams.items():
        ctc = logsumexp(*probabilities)
        score = ctc + extra[prefix] + (final_score(prefix) if final_score else 0.0)
        results.append((prefix, ctc, score))
    results.sort(key=lambda result: (-result[2], result[0]))
    return results


def labels_of(prefix):
    """The labels of a prefix made with the default ``symbols``, as an int64 array."""
    return np.array([ord(symbol) for symbol in prefix], np.int64)
