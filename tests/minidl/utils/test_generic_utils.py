"""Keras 2's list helpers of ``generic_utils``: to_list, unpack_singleton, slice_arrays."""

import numpy as np

from minidl import utils
from minidl.utils.generic_utils import slice_arrays, to_list, unpack_singleton


def test_to_list_wraps_everything_but_lists_and_tuples_only_when_allowed():
    items = [1, 2]
    assert to_list(items) is items
    assert to_list(3) == [3]
    assert to_list((1, 2)) == [(1, 2)]  # a tuple may be a shape: one item, as in Keras 2
    assert to_list((1, 2), allow_tuple=True) == [1, 2]
    assert utils.to_list is to_list and utils.slice_arrays is slice_arrays


def test_unpack_singleton():
    assert unpack_singleton([5]) == 5
    assert unpack_singleton((5, 6)) == (5, 6)


def test_slice_arrays_by_range_and_by_indices():
    a, b = np.arange(10), np.arange(20).reshape(10, 2)
    got = slice_arrays([a, None, b], 2, 5)
    np.testing.assert_array_equal(got[0], [2, 3, 4])
    assert got[1] is None
    np.testing.assert_array_equal(got[2], [[4, 5], [6, 7], [8, 9]])
    picked = slice_arrays([a, b], np.array([7, 1]))
    np.testing.assert_array_equal(picked[0], [7, 1])
    np.testing.assert_array_equal(picked[1], [[14, 15], [2, 3]])
    np.testing.assert_array_equal(slice_arrays(a, [0, 9]), [0, 9])
    np.testing.assert_array_equal(slice_arrays(a, 8), [8, 9])
    np.testing.assert_array_equal(slice_arrays(a, None, 2), [0, 1])
    assert slice_arrays(None) == [None]


def test_has_arg_and_object_list_uid():
    from minidl.layers import LSTM, Dense
    from minidl.utils.generic_utils import has_arg, object_list_uid

    def f(a, b=1, *args, c=2, **kwargs):
        pass
    assert has_arg(f, 'b') and has_arg(f, 'c') and not has_arg(f, 'args')
    assert not has_arg(f, 'd') and has_arg(f, 'd', accept_all=True)
    assert not has_arg(lambda a: a, 'd', accept_all=True)
    # What third-party wrappers ask of a layer's call.
    assert has_arg(LSTM(2).call, 'training') and not has_arg(Dense(2).call, 'training')
    first, second = object(), object()
    assert object_list_uid([first, second]) == f'{abs(id(first))}, {abs(id(second))}'
    assert object_list_uid(first) == str(abs(id(first)))
