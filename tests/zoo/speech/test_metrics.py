import pytest

from zoo.speech.metrics import cer, edit_distance, wer


@pytest.mark.parametrize('reference, hypothesis, distance', [
    ('', '', 0),
    ('abc', 'abc', 0),
    ('abc', 'abd', 1),          # one substitution
    ('abc', 'abxc', 1),         # one insertion
    ('abc', 'ac', 1),           # one deletion
    ('kitten', 'sitting', 3),   # k->s, e->i, +g
    ('', 'ab', 2),
    ('ab', '', 2),
    (['the', 'cat'], ['a', 'cat', 'sat'], 2),
])
def test_edit_distance_hand_computed(reference, hypothesis, distance):
    assert edit_distance(reference, hypothesis) == distance


def test_cer_is_corpus_level():
    # 'cat' -> 'cut': 1 edit of 3; 'hello' -> 'helo': 1 edit of 5; corpus 2 / 8,
    # not the mean of the per-utterance rates (1/3 + 1/5) / 2.
    assert cer(['cat', 'hello'], ['cut', 'helo']) == pytest.approx(2 / 8)
    assert cer('a b', 'ab') == pytest.approx(1 / 3)  # the space counts


def test_wer_substitution_insertion_deletion():
    assert wer('the cat sat', 'the bat sat') == pytest.approx(1 / 3)
    assert wer('the cat sat', 'the cat sat down') == pytest.approx(1 / 3)
    assert wer('the cat sat', 'the sat') == pytest.approx(1 / 3)
    assert wer(['a b', 'c d e f'], ['a x', 'c d']) == pytest.approx(3 / 6)
    assert wer('  the   cat ', 'the cat') == 0.0


def test_empty_references():
    assert cer('', '') == 0.0
    assert wer(['', ''], ['', '']) == 0.0
    assert cer(['', 'ab'], ['x', 'ab']) == pytest.approx(1 / 2)
    with pytest.raises(ValueError, match='undefined'):
        cer('', 'a')
    with pytest.raises(ValueError, match='undefined'):
        wer([''], ['word'])


def test_bad_arguments():
    with pytest.raises(ValueError, match='2 references but 1 hypotheses'):
        cer(['a', 'b'], ['a'])
    with pytest.raises(TypeError, match='both be strings or both be lists'):
        wer('a', ['a'])
    with pytest.raises(TypeError, match='must be strings'):
        cer(['a'], [3])
