"""The array helpers of the training loop: validation split, batch order, slicing."""

import numpy as np
import pytest

from minidl import Generator
from minidl.data import batch_indices, split_validation, take


def test_split_validation_takes_the_last_fraction_before_shuffling():
    x, y = np.arange(10), np.arange(10) * 10
    (train_x, train_y, none), (valid_x, valid_y, _) = split_validation([x, y, None], 0.25)
    # Keras: split at floor(10 * 0.75) = 7.
    np.testing.assert_array_equal(train_x, np.arange(7))
    np.testing.assert_array_equal(valid_y, [70, 80, 90])
    assert none is None
    nested_train, nested_valid = split_validation([[x, x], [y]], 0.5)
    assert len(nested_train[0][1]) == 5 and len(nested_valid[1][0]) == 5


@pytest.mark.parametrize('fraction', [0, 1, 1.5, -0.1, '0.2', True])
def test_split_validation_refuses_fractions_outside_0_1(fraction):
    with pytest.raises(ValueError, match='validation_split must be a number between 0 and 1'):
        split_validation([np.arange(10)], fraction)


def test_split_validation_refuses_an_empty_part():
    with pytest.raises(ValueError, match='leaves the training part empty'):
        split_validation([np.arange(3)], 0.9)
    with pytest.raises(ValueError, match='leaves the validation part empty'):
        split_validation([np.arange(3)], 1e-20)  # 1 - 1e-20 rounds to 1


def test_unshuffled_batches_are_slices_in_order():
    batches = batch_indices(10, 4, False, None)
    assert batches == [slice(0, 4), slice(4, 8), slice(8, 10)]
    assert batch_indices(0, 4, False, None) == []


def test_shuffled_batches_cover_every_sample_once_from_the_generator():
    batches = batch_indices(10, 4, True, Generator(7))
    assert [len(b) for b in batches] == [4, 4, 2]
    order = np.concatenate(batches)
    np.testing.assert_array_equal(np.sort(order), np.arange(10))
    np.testing.assert_array_equal(order, Generator(7).permutation(10))  # one draw per epoch
    assert not np.array_equal(order, np.arange(10))


def test_batch_shuffle_permutes_whole_batches_and_keeps_the_partial_one_last():
    generator = Generator(3)
    batches = batch_indices(11, 3, 'batch', generator)
    permutation = Generator(3).permutation(3)
    assert batches == [slice(3 * i, 3 * i + 3) for i in permutation] + [slice(9, 11)]


@pytest.mark.parametrize('batch_size, shuffle, message', [
    (0, False, 'batch_size must be a positive integer'),
    (2.0, False, 'batch_size must be a positive integer'),
    (2, 'yes', "shuffle must be True, False or 'batch'"),
    (2, None, "shuffle must be True, False or 'batch'"),
])
def test_batch_indices_refuses_bad_arguments(batch_size, shuffle, message):
    with pytest.raises(ValueError, match=message):
        batch_indices(10, batch_size, shuffle, Generator(0))


def test_take_cuts_the_same_samples_out_of_nested_arrays():
    x, y = np.arange(6).reshape(3, 2), np.array([7, 8, 9])
    taken = take([[x], y, None], np.array([2, 0]))
    np.testing.assert_array_equal(taken[0][0], [[4, 5], [0, 1]])
    np.testing.assert_array_equal(taken[1], [9, 7])
    assert taken[2] is None
    assert take(y, slice(1, 2)).tolist() == [8]
