"""The NaN/infinity check of the data (minidl/models/intake.py): a sum of squares decides
for contiguous float32/float64 arrays, every element where that sum is not finite."""

import warnings

import numpy as np
import pytest

from minidl.models.intake import check_finite

_DTYPES = (np.float16, np.float32, np.float64)


@pytest.mark.parametrize('dtype', _DTYPES)
def test_each_special_value_anywhere_is_refused_with_its_position(dtype):
    for value in (np.nan, np.inf, -np.inf):
        for position in ((0, 0), (2, 3), (4, 6)):
            data = np.ones((5, 7), dtype)
            data[position] = value
            with pytest.raises(ValueError, match=rf'x\[0\] holds a NaN or infinite value '
                               rf'\(first at index \({position[0]}, {position[1]}\)\)'):
                check_finite([data], 'x')


@pytest.mark.parametrize('dtype', _DTYPES)
def test_the_largest_finite_values_pass_without_a_warning(dtype):
    # Their squares overflow: the sum is infinite though every element is finite.
    data = np.full((3, 4), np.finfo(dtype).max, dtype)
    data[1, 2] = -np.finfo(dtype).max
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        check_finite([data], 'x')
    data[2, 3] = np.nan
    with pytest.raises(ValueError, match=r'first at index \(2, 3\)'):
        check_finite([data], 'x')


def test_non_contiguous_empty_and_integer_arrays():
    data = np.ones((6, 8), np.float32)
    data[5, 1] = np.inf
    with pytest.raises(ValueError, match=r'first at index \(1, 5\)'):
        check_finite([data.T], 'y')  # a transposed view: checked element by element
    check_finite([np.zeros((0, 3), np.float32), np.arange(6)], 'x')
