"""Keras 2.2.4's ``engine.training_utils`` helpers, on hand-made arrays."""

import numpy as np
import pytest

import minidl
from minidl import losses
from minidl.engine import training_utils as tu
from minidl.utils import Sequence


def test_standardize_input_data_orders_lists_dicts_and_single_arrays():
    a, b = np.zeros((4, 3)), np.ones((4,))
    got = tu.standardize_input_data({'y': b, 'x': a}, ['x', 'y'])
    assert got[0] is a and got[1].shape == (4, 1)  # a vector becomes a column
    assert tu.standardize_input_data(a, ['x'])[0] is a
    assert tu.standardize_input_data(None, ['x', 'y']) == [None, None]
    assert tu.standardize_input_data([1.0, 2.0], ['x'])[0].shape == (2, 1)
    assert tu.standardize_input_data([], []) == []


def test_standardize_input_data_refuses_wrong_counts_names_and_shapes():
    a = np.zeros((4, 3))
    with pytest.raises(ValueError, match="'y'"):
        tu.standardize_input_data({'x': a}, ['x', 'y'])
    with pytest.raises(ValueError, match='expects 2 array'):
        tu.standardize_input_data([a], ['x', 'y'])
    with pytest.raises(ValueError, match='dimensions'):
        tu.standardize_input_data(a, ['x'], shapes=[(None, 3, 1)])
    with pytest.raises(ValueError, match='shape'):
        tu.standardize_input_data(a, ['x'], shapes=[(None, 5)])
    # Only the batch axis differs: refused unless check_batch_axis=False.
    with pytest.raises(ValueError, match='shape'):
        tu.standardize_input_data(a, ['x'], shapes=[(8, 3)])
    tu.standardize_input_data(a, ['x'], shapes=[(8, 3)], check_batch_axis=False)


def test_standardize_sample_weights_per_output():
    w = np.ones(3)
    assert tu.standardize_sample_weights(None, ['a', 'b']) == [None, None]
    assert tu.standardize_sample_weights(w, ['a'])[0] is w
    assert tu.standardize_sample_weights({'b': w}, ['a', 'b']) == [None, w]
    assert tu.standardize_class_weights({'a': {0: 1.0}}, ['a']) == [{0: 1.0}]
    with pytest.raises(ValueError, match='2 outputs'):
        tu.standardize_sample_weights([w], ['a', 'b'])
    with pytest.raises(TypeError, match='list or a dict'):
        tu.standardize_sample_weights(w, ['a', 'b'])


def test_check_array_length_consistency():
    x, y = [np.zeros((4, 2))], [np.zeros((4, 1))]
    tu.check_array_length_consistency(x, y, [np.ones(4)])
    tu.check_array_length_consistency(x, y)
    with pytest.raises(ValueError, match='4 input samples and 3 target'):
        tu.check_array_length_consistency(x, [np.zeros((3, 1))])
    with pytest.raises(ValueError, match='input arrays'):
        tu.check_array_length_consistency(x + [np.zeros((5, 2))], y)
    with pytest.raises(ValueError, match='sample_weight'):
        tu.check_array_length_consistency(x, y, [np.ones(5)])


def test_check_loss_and_target_compatibility():
    with pytest.raises(ValueError, match='to_categorical'):
        tu.check_loss_and_target_compatibility(
            [np.zeros((4, 1))], [losses.categorical_crossentropy], [(None, 3)])
    with pytest.raises(ValueError, match='mean_squared_error'):
        tu.check_loss_and_target_compatibility(
            [np.zeros((4, 2))], [losses.mean_squared_error], [(None, 3)])
    tu.check_loss_and_target_compatibility(
        [np.zeros((4, 1))], [losses.sparse_categorical_crossentropy], [(None, 3)])


def test_batches_and_sample_counts():
    assert tu.make_batches(7, 3) == [(0, 3), (3, 6), (6, 7)]
    assert tu.check_num_samples([np.zeros((5, 2))]) == 5
    assert tu.check_num_samples([np.zeros((5, 2))], steps=2) == 5
    with pytest.raises(ValueError, match='batch_size must be None'):
        tu.check_num_samples([np.zeros((5, 2))], batch_size=2, steps=2)
    assert tu.collect_metrics(['acc'], ['a', 'b']) == [['acc'], ['acc']]
    assert tu.collect_metrics({'b': 'mae'}, ['a', 'b']) == [[], ['mae']]


def test_batch_shuffle_moves_whole_batches_and_repeats_with_the_seed():
    minidl.set_seed(3)
    first = tu.batch_shuffle(np.arange(10), 3)
    assert sorted(first[:9].reshape(3, 3).tolist()) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert first[-1] == 9  # the partial batch stays last
    minidl.set_seed(3)
    np.testing.assert_array_equal(tu.batch_shuffle(np.arange(10), 3), first)


def test_sequences():
    class Two(Sequence):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return index

    assert tu.is_sequence(Two()) and not tu.is_sequence([1, 2])
    batches = tu.iter_sequence_infinite(Two())
    assert [next(batches) for _ in range(5)] == [0, 1, 0, 1, 0]
