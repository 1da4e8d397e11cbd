"""CIFAR-10 loader: small batches in the python version's format, read back in Keras's layout."""

import pickle
import struct
import tarfile
import warnings

import numpy as np
import pytest

from minidl.datasets import cifar10

NAMES = [f'data_batch_{i}' for i in range(1, 6)] + ['test_batch']


def images_and_labels(seed, count):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(count, 32, 32, 3), dtype=np.uint8)
    return images, rng.integers(0, 10, size=count)


def batch_dict(images, labels):
    """The dict of a batch file: each row is the red, green and blue planes, one after another."""
    rows = images.transpose(0, 3, 1, 2).reshape(len(images), 3072)
    return {b'batch_label': b'batch', b'labels': [int(label) for label in labels],
            b'data': rows, b'filenames': [b'%d.png' % i for i in range(len(images))]}


def python2_batch(images, labels):
    """A batch as Python 2's cPickle (protocol 2) wrote the CIFAR-10 files: str is BINSTRING."""
    def string(text):
        if len(text) < 256:
            return b'U' + bytes([len(text)]) + text
        return b'T' + struct.pack('<i', len(text)) + text
    rows = batch_dict(images, labels)[b'data']
    stream = b'\x80\x02}q\x01(' + string(b'data')
    stream += (b'cnumpy.core.multiarray\n_reconstruct\nq\x02cnumpy\nndarray\nq\x03K\x00\x85'
               + string(b'b') + b'\x87Rq\x04(K\x01K' + bytes([len(rows)])
               + b'M\x00\x0c\x86cnumpy\ndtype\nq\x05' + string(b'u1') + b'K\x00K\x01\x87Rq\x06'
               + b'(K\x03' + string(b'|') + b'NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb'
               + b'\x89' + string(rows.tobytes()) + b'tb')
    stream += string(b'labels') + b']q\x07(' + b''.join(b'K' + bytes([int(label)])
                                                       for label in labels) + b'e'
    stream += string(b'batch_label') + string(b'training batch 1 of 5') + b'u.'
    return stream


def write_directory(directory, protocol=2):
    expected = {}
    for seed, name in enumerate(NAMES):
        images, labels = images_and_labels(seed, 3 + seed % 2)
        expected[name] = images, labels
        (directory / name).write_bytes(pickle.dumps(batch_dict(images, labels),
                                                    protocol=protocol))
    return expected


def check(result, expected):
    (x_train, y_train), (x_test, y_test) = result
    train_images = np.concatenate([expected[name][0] for name in NAMES[:5]])
    train_labels = np.concatenate([expected[name][1] for name in NAMES[:5]])
    assert x_train.dtype == np.uint8 and x_train.shape == (len(train_images), 32, 32, 3)
    assert y_train.dtype == np.uint8 and y_train.shape == (len(train_images), 1)
    np.testing.assert_array_equal(x_train, train_images)
    np.testing.assert_array_equal(y_train[:, 0], train_labels)
    np.testing.assert_array_equal(x_test, expected['test_batch'][0])
    np.testing.assert_array_equal(y_test[:, 0], expected['test_batch'][1])


@pytest.mark.parametrize('protocol', [2, 4, 5])
def test_load_data_reads_the_extracted_directory(tmp_path, protocol):
    expected = write_directory(tmp_path, protocol)
    check(cifar10.load_data(tmp_path), expected)


def test_load_data_reads_the_archive_without_extracting(tmp_path):
    folder = tmp_path / 'cifar-10-batches-py'
    folder.mkdir()
    expected = write_directory(folder)
    archive = tmp_path / 'cifar-10-python.tar.gz'
    with tarfile.open(archive, 'w:gz') as tar:
        tar.add(folder, arcname='cifar-10-batches-py')
    for name in NAMES:
        (folder / name).unlink()
    check(cifar10.load_data(archive), expected)


def test_the_python_2_format_reads_as_pickle_reads_it():
    images, labels = images_and_labels(9, 2)
    stream = python2_batch(images, labels)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)  # numpy.core's old name
        reference = pickle.loads(stream, encoding='bytes')
    np.testing.assert_array_equal(reference[b'data'], batch_dict(images, labels)[b'data'])
    x, y = cifar10.load_batch(stream)
    np.testing.assert_array_equal(x, images)
    np.testing.assert_array_equal(y, labels.reshape(-1, 1))


def test_a_missing_batch_is_named_with_where_to_get_it(tmp_path):
    write_directory(tmp_path)
    (tmp_path / 'data_batch_3').unlink()
    with pytest.raises(FileNotFoundError, match=r'data_batch_3 is missing.*cs.toronto.edu'):
        cifar10.load_data(tmp_path)
    with pytest.raises(FileNotFoundError, match='does not exist'):
        cifar10.load_data(tmp_path / 'nowhere')


def test_keras_cache_directory_is_the_default(tmp_path, monkeypatch):
    folder = tmp_path / '.keras' / 'datasets' / 'cifar-10-batches-py'
    folder.mkdir(parents=True)
    expected = write_directory(folder)
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.chdir(tmp_path)
    check(cifar10.load_data(), expected)


@pytest.mark.parametrize('change, message', [
    (lambda batch: batch.update({b'labels': [0, 10, 1]}), 'integers from 0 to 9'),
    (lambda batch: batch.update({b'labels': [0, 1]}), 'labels'),
    (lambda batch: batch.update({b'data': batch[b'data'][:, :100]}), r'shape \(n, 3072\)'),
    (lambda batch: batch.pop(b'data'), 'data'),
])
def test_a_malformed_batch_is_refused(change, message):
    batch = batch_dict(*images_and_labels(0, 3))
    change(batch)
    with pytest.raises(ValueError, match=message):
        cifar10.load_batch(pickle.dumps(batch))


def test_a_batch_that_runs_code_is_refused():
    class Evil:
        def __reduce__(self):
            return print, ('owned',)
    with pytest.raises(ValueError, match='refusing to load builtins.print'):
        cifar10.load_batch(pickle.dumps({b'data': Evil()}))


def test_non_archive_file_is_refused(tmp_path):
    path = tmp_path / 'cifar.tar.gz'
    path.write_bytes(b'not an archive')
    with pytest.raises(ValueError, match='not a tar archive'):
        cifar10.load_data(path)
