"""MNIST loader: IDX files (plain and gzip) and Keras's mnist.npz, written here and read back."""

import gzip
import hashlib
import struct

import numpy as np
import pytest

from minidl.datasets import mnist

FILES = {'x_train': 'train-images-idx3-ubyte', 'y_train': 'train-labels-idx1-ubyte',
         'x_test': 't10k-images-idx3-ubyte', 'y_test': 't10k-labels-idx1-ubyte'}


def idx_bytes(array, type_code=0x08):
    """The IDX format: 0, 0, type code, rank, the dimensions as big-endian uint32, the data."""
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f'>{array.ndim}I', *array.shape)
    return header + array.tobytes()


def sample_arrays():
    rng = np.random.default_rng(0)
    return {'x_train': rng.integers(0, 256, (5, 28, 28), dtype=np.uint8),
            'y_train': rng.integers(0, 10, 5, dtype=np.uint8),
            'x_test': rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
            'y_test': rng.integers(0, 10, 3, dtype=np.uint8)}


def write_idx_files(directory, compress):
    arrays = sample_arrays()
    for key, name in FILES.items():
        content = idx_bytes(arrays[key])
        if compress:
            (directory / f'{name}.gz').write_bytes(gzip.compress(content))
        else:
            (directory / name).write_bytes(content)
    return arrays


def check(result, arrays):
    (x_train, y_train), (x_test, y_test) = result
    for key, value in [('x_train', x_train), ('y_train', y_train), ('x_test', x_test),
                       ('y_test', y_test)]:
        assert value.dtype == np.uint8
        np.testing.assert_array_equal(value, arrays[key])


@pytest.mark.parametrize('compress', [False, True])
def test_idx_files_read_back(tmp_path, compress):
    arrays = write_idx_files(tmp_path, compress)
    check(mnist.load_data(tmp_path), arrays)


def test_keras_npz_reads_back_and_is_the_default_from_the_keras_cache(tmp_path, monkeypatch):
    arrays = sample_arrays()
    cache = tmp_path / '.keras' / 'datasets'
    cache.mkdir(parents=True)
    np.savez(cache / 'mnist.npz', **arrays)
    check(mnist.load_data(cache / 'mnist.npz'), arrays)
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.chdir(tmp_path)
    check(mnist.load_data(), arrays)


def test_a_missing_file_is_named_with_where_to_get_it(tmp_path):
    write_idx_files(tmp_path, compress=True)
    (tmp_path / 't10k-labels-idx1-ubyte.gz').unlink()
    with pytest.raises(FileNotFoundError,
                       match=r't10k-labels-idx1-ubyte \(or t10k-labels-idx1-ubyte.gz\) is '
                             r'missing.*yann.lecun.com'):
        mnist.load_data(tmp_path)
    with pytest.raises(FileNotFoundError, match='does not exist; download'):
        mnist.load_data(tmp_path / 'nowhere')


@pytest.mark.parametrize('type_code, dtype', [
    (0x08, '>u1'), (0x09, '>i1'), (0x0B, '>i2'), (0x0C, '>i4'), (0x0D, '>f4'), (0x0E, '>f8')])
def test_read_idx_handles_every_element_type(tmp_path, type_code, dtype):
    array = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    path = tmp_path / 'array-idx3'
    path.write_bytes(idx_bytes(array, type_code))
    result = mnist.read_idx(path)
    assert result.dtype == np.dtype(dtype).newbyteorder('=') and result.flags.writeable
    np.testing.assert_array_equal(result, array)


@pytest.mark.parametrize('content, message', [
    (b'\x00\x01\x08\x01' + bytes(8), 'not an IDX file'),
    (b'\x00\x00\x08\x03\x00\x00', 'header is incomplete'),
    (idx_bytes(np.zeros((2, 3), np.uint8))[:-1], r'holds 5 bytes of data.*says 6'),
])
def test_read_idx_refuses_malformed_files(tmp_path, content, message):
    path = tmp_path / 'bad'
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        mnist.read_idx(path)


def test_images_and_labels_must_match(tmp_path):
    write_idx_files(tmp_path, compress=False)
    (tmp_path / FILES['y_test']).write_bytes(idx_bytes(np.zeros(2, np.uint8)))
    with pytest.raises(ValueError, match='the test images .* and labels .* do not match'):
        mnist.load_data(tmp_path)


def test_an_npz_without_the_arrays_is_refused(tmp_path):
    np.savez(tmp_path / 'other.npz', x=np.zeros(3))
    with pytest.raises(ValueError, match='lacks the arrays'):
        mnist.load_data(tmp_path / 'other.npz')


def test_a_plain_npz_name_is_fetched_as_keras_fetches_it(tmp_path, monkeypatch):
    """No file anywhere: ``load_data()`` fetches Keras's origin into minidl's cache,
    checked against the MD5 (the origin is a local file:// URL here)."""
    arrays = sample_arrays()
    origin = tmp_path / 'origin' / 'mnist.npz'
    origin.parent.mkdir()
    np.savez(origin, **arrays)
    monkeypatch.setattr(mnist, 'ORIGIN', origin.as_uri())
    monkeypatch.setattr(mnist, 'MD5', hashlib.md5(origin.read_bytes()).hexdigest())
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path / 'cache'))
    monkeypatch.chdir(tmp_path)
    check(mnist.load_data(), arrays)
    assert (tmp_path / 'cache' / 'datasets' / 'mnist.npz').read_bytes() == origin.read_bytes()
    monkeypatch.setattr(mnist, 'MD5', '0' * 32)  # the cached file no longer matches: refused
    (tmp_path / 'cache' / 'datasets' / 'mnist.npz').write_bytes(b'not mnist')
    with pytest.warns(UserWarning, match='does not match'), pytest.raises(ValueError,
                                                                          match='hash'):
        mnist.load_data()


def test_offline_the_error_says_where_to_put_the_file_and_what_to_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(mnist, 'ORIGIN', (tmp_path / 'unreachable.npz').as_uri())
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path / 'cache'))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as raised:
        mnist.load_data()
    message = str(raised.value)
    assert str(tmp_path / 'cache' / 'datasets' / 'mnist.npz') in message
    assert 'load_data(path=...)' in message and mnist.MD5 in message
    assert not (tmp_path / 'cache' / 'datasets' / 'mnist.npz').exists()
