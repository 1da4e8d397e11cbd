"""Turning a CTC model's per-frame outputs into text: greedy and prefix beam search.

Both decoders take an array ``(N, T, C)`` of per-frame outputs over an
:class:`~zoo.speech.alphabet.Alphabet`'s ``C`` classes (index 0 the CTC
blank) and optional per-sample lengths ``(N,)``; frames at or after a
sample's length are padding and are never read. The searches themselves are
minidl's (``minidl.functions.ctc_decoding``, which ``K.ctc_decode`` uses
too); this module adds texts, checks and the language model's terms.
"""

import numpy as np

from minidl.functions.ctc_decoding import best_path, prefix_beam_search
from zoo.speech.alphabet import ENGLISH


def _check(probs, lengths, alphabet, name):
    """``probs`` as a float array and ``lengths`` as ints, or a clear error."""
    probs = np.asarray(probs)
    if probs.ndim != 3:
        raise ValueError(f'{name} must have shape (N, T, C), got shape {probs.shape}')
    batch, steps, classes = probs.shape
    if classes != len(alphabet):
        raise ValueError(f'{name} has {classes} classes per frame but the alphabet '
                         f'{alphabet!r} has {len(alphabet)} (its characters and the blank)')
    if lengths is None:
        return probs, [steps] * batch
    lengths = np.asarray(lengths)
    if lengths.shape != (batch,):
        raise ValueError(f'lengths must have shape ({batch},), one per sample, got shape '
                         f'{lengths.shape}')
    if not np.issubdtype(lengths.dtype, np.integer):
        if not np.all(lengths == np.round(lengths)):
            raise ValueError(f'lengths must be whole numbers of frames, got {lengths}')
    if np.any(lengths < 0) or np.any(lengths > steps):
        raise ValueError(f'lengths must lie in [0, {steps}] (T frames), got {lengths}')
    return probs, [int(length) for length in lengths]


def greedy_decode(probs, lengths=None, alphabet=ENGLISH):
    """Best-path decoding: the most likely class per frame, repeats merged, blanks dropped.

    Args:
        probs: Array-like ``(N, T, C)`` of per-frame probabilities or
            log-probabilities (or logits: only the argmax matters). Ties go
            to the lowest class index.
        lengths: Array-like ``(N,)`` of valid frames per sample, each in
            ``[0, T]``; None means all ``T``.
        alphabet: The alphabet of the ``C`` classes.

    Returns:
        A list of ``N`` strings.

    Raises:
        ValueError: On a rank other than 3, ``C != len(alphabet)`` or a
            length outside ``[0, T]``.
    """
    probs, lengths = _check(probs, lengths, alphabet, 'probs')
    return [alphabet.decode(best_path(sample[:length], blank=0)[0])
            for sample, length in zip(probs, lengths)]


def beam_search_decode(probs, lengths=None, beam_width=16, lm=None, alpha=0.5, beta=1.0,
                       alphabet=ENGLISH, prune=0.0):
    """CTC prefix beam search, with an optional character language model.

    The search (Hannun et al. 2014, "First-pass large vocabulary continuous
    speech recognition using bi-directional recurrent DNNs"; Amodei et al.
    2016, Deep Speech 2 section 7) keeps, frame by frame, the ``beam_width``
    best prefixes (texts so far). Each holds two probabilities, in log
    space: that of all alignments of the frames read that write it and end
    in a blank, and of those that end in its last character. A character
    equal to a prefix's last one extends it only from alignments ending in a
    blank (``"aa"`` needs a blank between the two ``a``); otherwise it merges
    into the prefix. Alignments that write the same prefix are summed, so the
    result is the most probable labelling within the beam, not the best path.

    Prefixes are ranked by
    ``log P_ctc(prefix) + alpha * log P_lm(prefix) + beta * words(prefix)``:
    ``log P_lm(prefix)`` is the sum of ``lm.log_prob(character, text before
    it)`` over the prefix's characters, added once as each character is
    appended; ``words(prefix)`` is ``len(prefix.split())``, so the bonus
    ``beta`` is earned when a character starts a word (follows a space or
    begins the text). After the last frame the ranking adds
    ``alpha * lm.log_prob(None, prefix)``, the probability that the sentence
    ends there. With ``lm=None`` there is no LM term and no word bonus
    (``alpha`` and ``beta`` are ignored): a pure CTC prefix search.

    Equal scores are broken by the prefix text, the one that sorts first
    winning, so results never depend on dict order.

    With ``beam_width=1`` and ``lm=None`` the result equals
    :func:`greedy_decode`'s whenever every frame's most likely class has
    probability ``q > 1/sqrt(2)`` (about 0.71; trained models are usually
    this sure): the best path's prefix then keeps more mass than each
    rival at every frame. A uniform LM (:meth:`CharNgramModel.uniform` over
    ``V`` outcomes) costs each character ``alpha * log V`` and rewards each
    word with ``beta``, the same for every character, so the equality still
    holds if moreover ``min((2q - 1) / (1 - q), q**2 / (2 * (1 - q)))``
    exceeds ``exp(alpha * log V + |beta|)`` (e.g. ``q >= 0.99`` for
    ``alpha=0.5, beta=1, V=29``).

    Args:
        probs: Array-like ``(N, T, C)`` of per-frame probabilities (softmax
            outputs, not logits or log-probabilities: take ``np.exp`` of
            those first).
        lengths: Array-like ``(N,)`` of valid frames per sample, each in
            ``[0, T]``; None means all ``T``.
        beam_width: Prefixes kept after each frame (``>= 1``).
        lm: A :class:`~zoo.speech.language_model.CharNgramModel` over the
            same characters, or None.
        alpha: Weight of the LM's log-probability.
        beta: Bonus per word (a positive value offsets the LM's preference
            for short texts).
        alphabet: The alphabet of the ``C`` classes.
        prune: Characters whose probability at a frame is ``<= prune`` do
            not extend prefixes at that frame (the blank always counts). The
            default 0 skips only impossible characters, so the search is
            exact within its beam; about ``1e-3`` speeds up long inputs.

    Returns:
        A list of ``N`` strings.

    Raises:
        ValueError: On a bad shape or length (as :func:`greedy_decode`),
            negative or non-finite values (not probabilities), a beam width
            below 1, or an LM over other characters.
    """
    probs, lengths = _check(probs, lengths, alphabet, 'probs')
    probs = probs.astype(np.float64)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise ValueError('beam_search_decode takes probabilities (softmax outputs) in [0, 1]; '
                         'probs has negative or non-finite values (for log-probabilities '
                         'pass np.exp(log_probs))')
    if not isinstance(beam_width, (int, np.integer)) or beam_width < 1:
        raise ValueError(f'beam_width must be a positive integer, got {beam_width!r}')
    if lm is not None and lm.alphabet.characters != alphabet.characters:
        raise ValueError(f'the language model is over {lm.alphabet!r} but the decoder over '
                         f'{alphabet!r}')
    with np.errstate(divide='ignore'):
        log_probs = np.log(probs)
    return [_search(sample[:length], allowed[:length], int(beam_width), lm, alpha, beta,
                    alphabet.characters)
            for sample, allowed, length in zip(log_probs, probs > prune, lengths)]


def _search(log_probs, allowed, beam_width, lm, alpha, beta, characters):
    """The best prefix for one utterance's log-probabilities ``(T, C)``."""
    def extension_score(prefix, index):
        # alpha * log P_lm(character | text so far) + beta for a character that starts a word.
        character = characters[index - 1]
        starts_word = character != ' ' and (not prefix or prefix[-1] == ' ')
        return alpha * lm.log_prob(character, prefix) + beta * starts_word

    def final_score(prefix):
        return alpha * lm.log_prob(None, prefix)

    # The prefixes are the texts themselves: class 0 (the blank) never extends one.
    ranked = prefix_beam_search(log_probs, 0, beam_width, allowed,
                                extension_score if lm is not None else None,
                                final_score if lm is not None else None,
                                symbols=[''] + list(characters))
    return ranked[0][0]
