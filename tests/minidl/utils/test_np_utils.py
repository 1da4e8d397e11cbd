"""to_categorical and normalize: Keras's semantics, checked by hand and with numpy."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.utils import normalize, to_categorical


def test_to_categorical_one_hot_rows():
    result = to_categorical([2, 0, 1])
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])


@pytest.mark.parametrize('shape, expected', [
    ((6,), (6, 5)), ((6, 1), (6, 5)), ((2, 3), (2, 3, 5)), ((2, 3, 1), (2, 3, 5)),
    ((1,), (1, 5))])
def test_to_categorical_drops_a_trailing_axis_of_one(shape, expected):
    labels = np.arange(np.prod(shape)).reshape(shape) % 5
    result = to_categorical(labels, num_classes=5)
    assert result.shape == expected
    np.testing.assert_array_equal(result.argmax(-1).ravel(), labels.ravel())


def test_to_categorical_arguments():
    assert to_categorical(np.array([1.0, 0.0]), 4, dtype='int64').tolist() == [
        [0, 1, 0, 0], [1, 0, 0, 0]]
    assert to_categorical(Tensor(np.array([1, 1]))).tolist() == [[0, 1], [0, 1]]


@pytest.mark.parametrize('labels, num_classes, message', [
    ([0, 3], 3, r'labels must lie in \[0, 3\); got values from 0 to 3'),
    ([-1, 1], None, r'labels must lie in \[0, 2\)'),
    ([0.5, 1.0], None, 'whole numbers'),
    (np.array(['a']), None, 'integers'),
    ([], None, 'cannot infer num_classes'),
])
def test_to_categorical_refuses_bad_labels(labels, num_classes, message):
    with pytest.raises(ValueError, match=message):
        to_categorical(labels, num_classes)


def test_normalize_scales_rows_to_unit_norm_and_leaves_zero_rows():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]])
    np.testing.assert_allclose(normalize(x), [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]])
    np.testing.assert_allclose(normalize(x, axis=0, order=1),
                               x / np.array([4.0, 4.0]))
    assert normalize(np.array([2.0, 0.0]), axis=0).tolist() == [1.0, 0.0]
