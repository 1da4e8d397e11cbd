"""preprocessing.sequence: sampling table, skip-grams and TimeseriesGenerator, checked by hand."""

import math
from collections import Counter

import numpy as np
import pytest

import minidl
from minidl.data import Sequence
from minidl.preprocessing import sequence
from minidl.utils import pad_sequences


def test_pad_sequences_is_the_utils_function():
    assert sequence.pad_sequences is pad_sequences
    assert sequence.pad_sequences([[1, 2], [3]]).tolist() == [[1, 2], [0, 3]]


def test_sampling_table_follows_the_word2vec_formula_with_zipf_frequencies():
    factor = 1e-3
    table = sequence.make_sampling_table(6, sampling_factor=factor)
    for rank in range(6):
        r = max(rank, 1)  # rank 0 is not a word; it gets rank 1's value
        frequency = 1 / (r * (math.log(r) + 0.577) + 0.5 - 1 / (12 * r))
        ratio = frequency / factor
        assert table[rank] == pytest.approx(min(1.0, math.sqrt(ratio) / ratio))
    assert table[0] == table[1] and np.all(np.diff(table[1:]) > 0)


SENTENCE = [1, 2, 3, 0, 4]
# Window 1, zeros skipped as centres and as neighbours.
POSITIVES = [[1, 2], [2, 1], [2, 3], [3, 2]]


def test_skipgram_positives_are_the_pairs_within_the_window():
    couples, labels = sequence.skipgrams(SENTENCE, 5, window_size=1, negative_samples=0,
                                         shuffle=False)
    assert couples == POSITIVES and labels == [1, 1, 1, 1]
    couples, _ = sequence.skipgrams(SENTENCE, 5, window_size=2, negative_samples=0,
                                    shuffle=False)
    assert couples == [[1, 2], [1, 3], [2, 1], [2, 3], [3, 1], [3, 2], [3, 4], [4, 3]]


def test_skipgram_negatives_pair_each_centre_word_with_a_random_word():
    couples, labels = sequence.skipgrams(SENTENCE, 5, window_size=1, negative_samples=1.5,
                                         shuffle=False, categorical=True, seed=3)
    assert couples[:4] == POSITIVES and labels[:4] == [[0, 1]] * 4
    negatives = couples[4:]
    assert len(negatives) == 6 and labels[4:] == [[1, 0]] * 6
    # The centre words are the positives' first words, shuffled, used in turn.
    assert sorted(pair[0] for pair in negatives[:4]) == [1, 2, 2, 3]
    assert [pair[0] for pair in negatives[4:]] == [pair[0] for pair in negatives[:2]]
    assert all(1 <= pair[1] <= 4 for pair in negatives)


def test_shuffling_keeps_each_pair_with_its_label_and_is_seeded():
    plain = sequence.skipgrams(SENTENCE, 5, window_size=1, shuffle=False, seed=7)
    shuffled = sequence.skipgrams(SENTENCE, 5, window_size=1, shuffle=True, seed=7)
    as_counter = lambda result: Counter((tuple(c), l) for c, l in zip(*result))  # noqa: E731
    assert as_counter(shuffled) == as_counter(plain)
    assert shuffled == sequence.skipgrams(SENTENCE, 5, window_size=1, seed=7)
    long_sentence = list(range(1, 30))
    assert sequence.skipgrams(long_sentence, 30, seed=1) != sequence.skipgrams(long_sentence, 30,
                                                                               seed=2)


def test_without_a_seed_skipgrams_draw_from_the_default_generator():
    minidl.set_seed(11)
    first = sequence.skipgrams(list(range(1, 20)), 20)
    minidl.set_seed(11)
    assert sequence.skipgrams(list(range(1, 20)), 20) == first


def test_a_sampling_table_drops_centre_words():
    never = sequence.skipgrams(SENTENCE, 5, window_size=1, sampling_table=np.zeros(5), seed=0)
    assert never == ([], [])
    always = sequence.skipgrams(SENTENCE, 5, window_size=1, negative_samples=0, shuffle=False,
                                sampling_table=np.ones(5), seed=0)
    assert always == (POSITIVES, [1, 1, 1, 1])


def test_timeseries_generator_matches_the_keras_documentation_example():
    data = np.array([[i] for i in range(50)])
    windows = sequence.TimeseriesGenerator(data, data, length=10, sampling_rate=2, batch_size=2)
    assert isinstance(windows, Sequence) and len(windows) == 20
    x, y = windows[0]
    assert x.tolist() == [[[0], [2], [4], [6], [8]], [[1], [3], [5], [7], [9]]]
    assert y.tolist() == [[10], [11]]
    x, y = windows[-1]
    assert x[-1, :, 0].tolist() == [39, 41, 43, 45, 47] and y.tolist() == [[48], [49]]


def test_timeseries_stride_bounds_and_reverse():
    data = np.arange(10)
    # Targets are steps 4, 6, 8 (start_index 1 + length 3, stride 2, end_index 8).
    windows = sequence.TimeseriesGenerator(data, data * 10, length=3, stride=2, start_index=1,
                                           end_index=8, batch_size=2)
    assert len(windows) == 2
    x, y = windows[0]
    assert x.tolist() == [[1, 2, 3], [3, 4, 5]] and y.tolist() == [40, 60]
    x, y = windows[1]
    assert x.tolist() == [[5, 6, 7]] and y.tolist() == [80]
    backwards = sequence.TimeseriesGenerator(data, data, length=3, stride=2, start_index=1,
                                             end_index=8, batch_size=2, reverse=True)
    assert backwards[0][0].tolist() == [[3, 2, 1], [5, 4, 3]]
    with pytest.raises(IndexError):
        windows[2]


def test_shuffled_timeseries_batches_draw_target_steps_in_range():
    data = np.arange(30)
    minidl.set_seed(4)
    windows = sequence.TimeseriesGenerator(data, data, length=5, batch_size=8, shuffle=True,
                                           start_index=2, end_index=25)
    x, y = windows[0]
    assert x.shape == (8, 5)
    assert np.all((y >= 7) & (y <= 25))
    assert np.array_equal(x, y[:, None] + np.arange(-5, 0))
    minidl.set_seed(4)
    again = sequence.TimeseriesGenerator(data, data, length=5, batch_size=8, shuffle=True,
                                         start_index=2, end_index=25)
    assert np.array_equal(again[0][1], y)


@pytest.mark.parametrize('arguments, message', [
    ({'targets': np.arange(9)}, 'same length'),
    ({'length': 8, 'start_index': 3}, 'leaves no step'),
])
def test_timeseries_generator_refuses_bad_arguments(arguments, message):
    settings = {'data': np.arange(10), 'targets': np.arange(10), 'length': 3, **arguments}
    with pytest.raises(ValueError, match=message):
        sequence.TimeseriesGenerator(**settings)
