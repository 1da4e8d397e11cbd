import itertools
import math
import time

import numpy as np
import pytest

from minidl.compute import Generator
from zoo.speech.alphabet import ENGLISH, Alphabet
from zoo.speech.decoding import beam_search_decode, greedy_decode
from zoo.speech.language_model import CharNgramModel

AB = Alphabet('ab')          # classes: 0 blank, 1 'a', 2 'b'
A_SPACE = Alphabet('a ')     # classes: 0 blank, 1 'a', 2 ' '


def table(alphabet, frames):
    """Probabilities (1, T, C) from per-frame {character or '-' for blank: probability}."""
    probs = np.zeros((1, len(frames), len(alphabet)))
    for t, frame in enumerate(frames):
        for symbol, p in frame.items():
            probs[0, t, 0 if symbol == '-' else alphabet.characters.index(symbol) + 1] = p
        probs[0, t] /= probs[0, t].sum()
    return probs


def one_hot(alphabet, path):
    """A table whose only path is ``path`` ('-' for blank), as (1, T, C)."""
    return table(alphabet, [{symbol: 1.0} for symbol in path])


def decoders(probs, **kwargs):
    return greedy_decode(probs, **kwargs), beam_search_decode(probs, **kwargs)


@pytest.mark.parametrize('path, text', [
    ('aab', 'ab'),        # repeats merge
    ('a-a', 'aa'),        # a blank separates two a's
    ('aa-ab', 'aab'),
    ('a a', 'a a'),       # the space is a character, not a separator
    ('---', ''),          # all blank
    ('', ''),             # no frames
])
def test_known_paths(path, text):
    alphabet = Alphabet('ab ')
    probs = one_hot(alphabet, path) if path else np.zeros((1, 0, 4))
    assert decoders(probs, alphabet=alphabet) == ([text], [text])


def test_lengths_ignore_padding():
    probs = np.concatenate([one_hot(AB, 'a-ab'), one_hot(AB, 'bbab')])
    kwargs = dict(lengths=[3, 2], alphabet=AB)
    assert decoders(probs, **kwargs) == (['aa', 'b'], ['aa', 'b'])
    assert decoders(probs, lengths=np.array([0, 4]), alphabet=AB) == (['', 'bab'], ['', 'bab'])


def test_greedy_accepts_log_probabilities_and_lists():
    probs = table(AB, [{'a': .6, '-': .4}, {'b': .3, '-': .7}, {'b': .9, 'a': .1}])
    with np.errstate(divide='ignore'):
        assert greedy_decode(np.log(probs), alphabet=AB) == ['ab']
    assert greedy_decode(probs.tolist(), alphabet=AB) == ['ab']


def test_beam_differs_from_greedy_by_summing_alignments():
    # Two frames, each P(blank) = .6, P(a) = .4. Best path '--' writes ''
    # with .36; 'a' is written by 'aa', 'a-', '-a': .16 + .24 + .24 = .64.
    probs = table(AB, [{'-': .6, 'a': .4}] * 2)
    assert greedy_decode(probs, alphabet=AB) == ['']
    assert beam_search_decode(probs, alphabet=AB) == ['a']
    # A beam of 1 drops 'a' (.4 < .6) after the first frame, before its other
    # alignments add up.
    assert beam_search_decode(probs, beam_width=1, alphabet=AB) == ['']


def brute_force(probs):
    """Most probable labelling of one (T, C) table by enumerating every path."""
    steps, classes = probs.shape
    totals = {}
    for path in itertools.product(range(classes), repeat=steps):
        labels = tuple(c for i, c in enumerate(path) if c and (i == 0 or c != path[i - 1]))
        totals[labels] = totals.get(labels, 0.0) + np.prod(probs[np.arange(steps), path])
    return AB.decode(max(totals, key=totals.get))


def test_wide_beam_equals_brute_force_enumeration():
    generator = Generator(1)
    for _ in range(25):
        logits = generator.normal((1, 5, 3), dtype='float64')
        probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
        assert beam_search_decode(probs, beam_width=1000, alphabet=AB) == \
            [brute_force(probs[0])]


def peaked_tables(generator, count, steps, classes, low):
    """Random tables whose top class per frame has probability in [low, 1)."""
    top = generator.integers(0, classes, (count, steps))
    # Favour blanks and repeats, where the decoders' rules matter.
    top[:, 1:] = np.where(generator.uniform((count, steps - 1)) < .3, top[:, :-1], top[:, 1:])
    top = np.where(generator.uniform((count, steps)) < .3, 0, top)
    rest = generator.uniform((count, steps, classes), dtype='float64') + 1e-3
    rest[np.arange(count)[:, None], np.arange(steps), top] = 0
    rest /= rest.sum(-1, keepdims=True)
    peak = generator.uniform((count, steps, 1), low, 1.0, dtype='float64')
    probs = rest * (1 - peak)
    probs[np.arange(count)[:, None], np.arange(steps), top] = peak[..., 0]
    return probs


def test_beam_one_without_lm_equals_greedy_on_peaked_tables():
    # Every frame's top class above 1/sqrt(2) (see beam_search_decode).
    probs = peaked_tables(Generator(2), 100, 20, 4, 0.72)
    alphabet = Alphabet('ab ')
    assert beam_search_decode(probs, beam_width=1, alphabet=alphabet) == \
        greedy_decode(probs, alphabet=alphabet)


def test_beam_one_with_uniform_lm_equals_greedy_on_peaked_tables():
    probs = peaked_tables(Generator(3), 100, 30, len(ENGLISH), 0.99)
    greedy = greedy_decode(probs)
    assert len(set(greedy)) > 50  # the tables are varied
    for beta in [1.0, -1.0]:
        assert beam_search_decode(probs, beam_width=1, lm=CharNgramModel.uniform(),
                                  alpha=0.5, beta=beta) == greedy
    # Outside the condition (alpha * log 29 = 10 > log 99) the LM's cost per
    # character makes the search stay on shorter prefixes.
    heavy = beam_search_decode(probs, beam_width=1, lm=CharNgramModel.uniform(), alpha=3.0,
                               beta=0.0)
    assert all(len(h) <= len(g) for h, g in zip(heavy, greedy)) and heavy != greedy


def test_beam_one_can_differ_from_greedy_below_the_condition():
    # Frames at .51 'a' / .49 blank leave the prefix 'a' mostly ending in a
    # blank, so a sure 'a' then starts a second 'a'; the best path merges it.
    probs = table(AB, [{'a': .51, '-': .49}] * 12 + [{'a': .99, '-': .01}])
    assert greedy_decode(probs, alphabet=AB) == ['a']
    assert beam_search_decode(probs, beam_width=1, alphabet=AB) == ['aa']


def test_zero_weights_equal_no_lm():
    lm = CharNgramModel.train(['the cat sat on the mat', 'a hat'], order=3)
    generator = Generator(4)
    logits = 2 * generator.normal((6, 12, len(ENGLISH)), dtype='float64')
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    expected = beam_search_decode(probs, beam_width=8)
    assert beam_search_decode(probs, beam_width=8, lm=lm, alpha=0.0, beta=0.0) == expected
    # and the LM does change some of them when weighted
    assert beam_search_decode(probs, beam_width=8, lm=lm, alpha=2.0, beta=0.0) != expected


def test_lm_prefers_its_words_over_a_similar_non_word():
    # The acoustics lean to 'cst' (s .55 against a .45), the LM knows 'cat'.
    probs = table(ENGLISH, [{'c': 1}, {'-': 1}, {'s': .55, 'a': .45}, {'-': 1}, {'t': 1}])
    lm = CharNgramModel.train(['the cat sat on the mat', 'a cat'] * 3, order=4)
    assert greedy_decode(probs) == ['cst']
    assert beam_search_decode(probs) == ['cst']
    assert beam_search_decode(probs, lm=lm, alpha=0.5, beta=0.0) == ['cat']


def test_word_bonus_changes_word_count():
    # 'ab' (.6) against 'a b' (.4): one word against two. With alpha = 0 the
    # score is log P + beta * words: beta = 1 gives log .4 + 2 > log .6 + 1.
    alphabet = Alphabet('ab ')
    probs = table(alphabet, [{'a': 1}, {'-': .6, ' ': .4}, {'b': 1}])
    lm = CharNgramModel.uniform(alphabet)

    def decode(beta):
        return beam_search_decode(probs, lm=lm, alpha=0.0, beta=beta, alphabet=alphabet)[0]

    assert decode(0.0) == 'ab'
    assert decode(-1.0) == 'ab'
    assert decode(1.0) == 'a b'
    assert math.log(.4) + 2 * 0.3 < math.log(.6) + 0.3 and decode(0.3) == 'ab'


def test_pruning_skips_unlikely_characters():
    probs = table(AB, [{'-': .6, 'a': .4}] * 2)
    assert beam_search_decode(probs, alphabet=AB, prune=0.5) == ['']


def test_speed_five_gram_beam_16():
    lm = CharNgramModel.train(['the quick brown fox jumps over the lazy dog',
                               'she sells sea shells by the sea shore'] * 5, order=5)
    logits = 3 * Generator(5).normal((1, 150, len(ENGLISH)), dtype='float64')
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    start = time.perf_counter()
    beam_search_decode(probs, beam_width=16, lm=lm)
    assert time.perf_counter() - start < 2.0  # typically about 0.4 s


def test_errors():
    good = one_hot(AB, 'ab')
    with pytest.raises(ValueError, match=r'shape \(N, T, C\)'):
        greedy_decode(good[0], alphabet=AB)
    with pytest.raises(ValueError, match='3 classes per frame but the alphabet'):
        beam_search_decode(good)
    with pytest.raises(ValueError, match=r'lengths must lie in \[0, 2\]'):
        greedy_decode(good, lengths=[3], alphabet=AB)
    with pytest.raises(ValueError, match=r'lengths must lie'):
        beam_search_decode(good, lengths=[-1], alphabet=AB)
    with pytest.raises(ValueError, match='one per sample'):
        greedy_decode(good, lengths=[1, 1], alphabet=AB)
    with pytest.raises(ValueError, match='log_probs'):
        beam_search_decode(np.log(table(AB, [{'a': .5, '-': .3, 'b': .2}] * 2)), alphabet=AB)
    with pytest.raises(ValueError, match='beam_width'):
        beam_search_decode(good, beam_width=0, alphabet=AB)
    with pytest.raises(ValueError, match='language model is over'):
        beam_search_decode(good, alphabet=AB, lm=CharNgramModel.uniform())
