"""The restricted pickle reader: pickle's values for data, refusal for anything that runs code."""

import os
import pickle

import numpy as np
import pytest

from minidl.datasets.restricted_pickle import RestrictedPickleError, loads

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def assert_same(ours, theirs):
    assert type(ours) is type(theirs)
    if isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)
        assert ours.flags.writeable
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            assert_same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert ours == theirs


DATA = {
    b'data': np.arange(24, dtype=np.uint8).reshape(4, 6),
    'labels': [0, 9, 3, 255, 256, 70000, -2, 2 ** 70, -(2 ** 70)],
    'plain': (None, True, False, 1.5, -0.0, 'text é', b'\x00\xff', (), [], {}),
    'nested': {'a': [(1, 2), {'b': b''}]},
    'float32 big-endian': np.linspace(-1, 1, 6, dtype='>f4').reshape(2, 3),
    'fortran': np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)),
    'strided': np.arange(10.0)[::3],
    'strings': np.array([b'ab', b'c'], dtype='S2'),
    'unicode': np.array(['xy', 'z'], dtype='U2'),
    'scalar': np.float32(2.5),
    'empty': np.zeros((0, 3), dtype=np.int16),
    'complex': np.array([1 + 2j]),
    'bool': np.array([True, False]),
}


@pytest.mark.parametrize('protocol', PROTOCOLS)
def test_data_reads_as_pickle_reads_it(protocol):
    data = pickle.dumps(DATA, protocol=protocol)
    assert_same(loads(data), pickle.loads(data))


@pytest.mark.parametrize('protocol', PROTOCOLS)
def test_a_shared_array_stays_one_value(protocol):
    array = np.arange(3, dtype=np.uint8)
    result = loads(pickle.dumps([array, array, array.dtype], protocol=protocol))
    np.testing.assert_array_equal(result[1], array)
    assert result[0] is result[1] and result[2] == np.uint8


class RunsCode:
    """Unpickling this with pickle would call ``os.mkdir(path)``."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.mkdir, (self.path,)


@pytest.mark.parametrize('protocol', PROTOCOLS)
def test_a_pickle_that_calls_os_functions_is_refused_without_running(protocol, tmp_path):
    target = tmp_path / 'created'
    data = pickle.dumps({b'data': RunsCode(str(target))}, protocol=protocol)
    with pytest.raises(RestrictedPickleError, match=r'refusing to load (posix|nt)\.mkdir'):
        loads(data)
    assert not target.exists()


def test_os_system_is_refused():
    crafted = b'cos\nsystem\n(S"echo owned"\ntR.'
    with pytest.raises(RestrictedPickleError, match='refusing to load os.system'):
        loads(crafted)


class Plain:
    def __init__(self):
        self.value = 1


@pytest.mark.parametrize('value, message', [
    (Plain(), 'refusing'),
    (np.array([1, 'a'], dtype=object), 'refusing'),
    (np.zeros(2, dtype=[('a', 'i4')]), 'refusing'),
    ({1, 2}, 'refusing'),
    (eval, r'refusing to load (__builtin__|builtins)\.eval'),
])
@pytest.mark.parametrize('protocol', [2, pickle.HIGHEST_PROTOCOL])
def test_objects_other_than_data_are_refused(value, message, protocol):
    with pytest.raises(RestrictedPickleError, match=message):
        loads(pickle.dumps(value, protocol=protocol))


def test_reduce_on_an_allowed_global_with_crafted_arguments_is_checked():
    # numpy.dtype('O') would let later data name arbitrary objects.
    crafted = b'\x80\x02cnumpy\ndtype\nX\x01\x00\x00\x00OK\x00K\x01\x87R.'
    with pytest.raises(RestrictedPickleError, match='refusing the numpy dtype object'):
        loads(crafted)
    # REDUCE on something that is not one of the reconstruction functions.
    with pytest.raises(RestrictedPickleError, match='calls something'):
        loads(b'\x80\x02X\x01\x00\x00\x00a)R.')


@pytest.mark.parametrize('data, message', [
    (pickle.dumps([1, 2, 3], protocol=2)[:-3], 'truncated'),
    (b'\x80\x02K\x01K\x02.', 'unfinished'),
    (b'\x80\x09N.', 'unknown pickle protocol'),
    (b'(K\x01K\x02K\x03d.', 'key-value pairs'),
    (b'\x80\x02h\x05.', 'malformed'),
])
def test_malformed_data_raises_a_clear_error(data, message):
    with pytest.raises(RestrictedPickleError, match=message):
        loads(data)


@pytest.mark.parametrize('protocol', PROTOCOLS)
def test_object_arrays_of_plain_values_read_only_when_allowed(protocol):
    ragged = np.empty(3, dtype=object)
    ragged[:] = [[1, 14, 22], [1, 5], []]  # as np.save stores imdb.npz's reviews
    mixed = np.array([[1, 'a'], [None, (2, 3)]], dtype=object)
    data = pickle.dumps({'ragged': ragged, 'mixed': mixed}, protocol=protocol)
    with pytest.raises(RestrictedPickleError, match='refusing the numpy dtype object'):
        loads(data)
    result = loads(data, allow_object_arrays=True)
    assert result['ragged'].dtype == object and result['ragged'].shape == (3,)
    assert [list(item) for item in result['ragged']] == [[1, 14, 22], [1, 5], []]
    assert result['mixed'].tolist() == [[1, 'a'], [None, (2, 3)]]


@pytest.mark.parametrize('protocol', [2, pickle.HIGHEST_PROTOCOL])
def test_object_arrays_still_refuse_objects_that_are_not_data(protocol, tmp_path):
    target = tmp_path / 'created'
    holder = np.empty(1, dtype=object)
    holder[0] = RunsCode(str(target))
    with pytest.raises(RestrictedPickleError, match='refusing to load'):
        loads(pickle.dumps(holder, protocol=protocol), allow_object_arrays=True)
    assert not target.exists()


def test_an_object_array_from_raw_bytes_is_refused():
    # ndarray state whose data are 8 raw bytes: read as a pointer, it would reach any memory.
    crafted = (b'\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b'
               b'\x87R(K\x01K\x01\x85cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R'
               b'\x89C\x08\x00\x00\x00\x00\x00\x00\x00\x00tb.')
    with pytest.raises(RestrictedPickleError, match='needs a list of as many values'):
        loads(crafted, allow_object_arrays=True)
    # The same bytes through numpy's _frombuffer(buffer, dtype, shape, order).
    crafted = (b'\x80\x02cnumpy.core.numeric\n_frombuffer\n(C\x08\x00\x00\x00\x00\x00\x00\x00'
               b'\x00cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87RK\x01\x85X\x01\x00\x00\x00C'
               b'tR.')
    with pytest.raises(RestrictedPickleError, match='never from raw bytes'):
        loads(crafted, allow_object_arrays=True)
