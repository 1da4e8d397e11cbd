"""The digits loader: scikit-learn's 8x8 digits, split deterministically."""

import sys

import numpy as np
import pytest

from minidl.datasets import digits


def test_missing_scikit_learn_raises_an_import_error_with_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, 'sklearn.datasets', None)
    with pytest.raises(ImportError, match=r'pip install minidl\[data\]'):
        digits.load_data()


@pytest.mark.parametrize('test_split', [1.0, -0.1, '0.2'])
def test_test_split_outside_0_1_is_refused(test_split):
    with pytest.raises(ValueError, match='test_split'):
        digits.load_data(test_split)


def test_the_split_is_a_seeded_partition_of_the_whole_set():
    datasets = pytest.importorskip('sklearn.datasets')
    (x_train, y_train), (x_test, y_test) = digits.load_data()
    assert x_train.shape == (1437, 8, 8) and x_test.shape == (360, 8, 8)
    assert x_train.dtype == y_train.dtype == np.uint8
    assert x_train.max() == 16 and x_train.min() == 0
    assert set(np.unique(y_train)) == set(range(10))

    original = datasets.load_digits()
    rows = np.concatenate([x_train, x_test]).reshape(1797, 64)
    labels = np.concatenate([y_train, y_test])
    # Every image appears once, with its own label.
    order = np.lexsort(rows.T[::-1])
    reference = np.lexsort(original.data.T[::-1])
    np.testing.assert_array_equal(rows[order], original.data[reference])
    np.testing.assert_array_equal(labels[order], original.target[reference])

    again = digits.load_data()
    np.testing.assert_array_equal(again[1][0], x_test)
    other = digits.load_data(seed=1)
    assert not np.array_equal(other[1][0], x_test)
    (all_x, _), (no_x, _) = digits.load_data(test_split=0.0)
    assert len(all_x) == 1797 and len(no_x) == 0
