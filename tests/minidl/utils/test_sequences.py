"""pad_sequences: Keras's padding and truncation, checked by hand."""

import numpy as np
import pytest

from minidl.utils import pad_sequences

SEQUENCES = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]


def test_defaults_pad_and_truncate_at_the_front():
    result = pad_sequences(SEQUENCES)
    assert result.dtype == np.int32
    assert result.tolist() == [[0, 0, 1, 2, 3], [0, 0, 0, 0, 4], [0] * 5, [5, 6, 7, 8, 9]]


def test_post_padding_and_truncation_with_a_value():
    result = pad_sequences(SEQUENCES, maxlen=3, padding='post', truncating='post', value=-1)
    assert result.tolist() == [[1, 2, 3], [4, -1, -1], [-1, -1, -1], [5, 6, 7]]
    assert pad_sequences(SEQUENCES, maxlen=2).tolist() == [[2, 3], [0, 4], [0, 0], [8, 9]]
    assert pad_sequences(SEQUENCES, maxlen=0).shape == (4, 0)


def test_steps_may_be_vectors_and_dtypes_may_be_float_or_text():
    result = pad_sequences([np.ones((2, 3)), np.ones((1, 3))], dtype='float32', value=0.5)
    assert result.shape == (2, 2, 3) and result[1, 0].tolist() == [0.5] * 3
    text = pad_sequences([['a', 'bc'], ['d']], dtype=object, value='')
    assert text.tolist() == [['a', 'bc'], ['', 'd']]


@pytest.mark.parametrize('arguments, message', [
    ({'padding': 'middle'}, "padding must be 'pre' or 'post'"),
    ({'truncating': 'end'}, "truncating must be 'pre' or 'post'"),
    ({'value': 'x'}, 'use dtype=object'),
])
def test_bad_arguments_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        pad_sequences(SEQUENCES, **arguments)


def test_sequences_without_length_or_of_mixed_step_shapes_are_refused():
    with pytest.raises(ValueError, match='list of sequences'):
        pad_sequences([1, 2])
    with pytest.raises(ValueError, match=r'steps of sequence 1 have shape \(3,\)'):
        pad_sequences([np.ones((2, 2)), np.ones((1, 3))], dtype='float32')
