"""CIFAR-10 from local files: 50000 training and 10000 test colour images, 32x32, 10 classes.

``load_data(path)`` reads the "python version" of
https://www.cs.toronto.edu/~kriz/cifar.html: either the archive
``cifar-10-python.tar.gz`` itself or the directory ``cifar-10-batches-py``
extracted from it (files ``data_batch_1`` to ``data_batch_5`` and
``test_batch``). Those files are pickles; they are read with
:mod:`minidl.datasets.restricted_pickle`, which builds only plain values and
numpy arrays and never runs code named in a file. Nothing is downloaded.
"""

import os
import tarfile

import numpy as np

from minidl.datasets.files import locate
from minidl.datasets.restricted_pickle import loads

_TRAIN = [f'data_batch_{i}' for i in range(1, 6)]
_TEST = 'test_batch'
_FOLDER = 'cifar-10-batches-py'
_WHERE = ('download cifar-10-python.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html '
          'and pass its path (or that of the cifar-10-batches-py directory extracted from it)')


def load_data(path=_FOLDER):
    """The CIFAR-10 images and labels, in Keras's layout.

    Args:
        path: The ``cifar-10-python.tar.gz`` archive or the directory holding
            the batch files. A relative path that does not exist is also
            looked up under ``~/.keras/datasets`` (where Keras extracts it).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images of shape
        (n, 32, 32, 3) (channels last) and uint8 labels of shape (n, 1).

    Raises:
        FileNotFoundError: If ``path`` or a batch file is missing.
        ValueError: If a file is not a CIFAR-10 batch (or would run code).
    """
    location = locate(path)
    if location is None:
        raise FileNotFoundError(f'cifar10: {path} does not exist; {_WHERE}')
    if os.path.isdir(location):
        contents = {name: _read_file(location, name) for name in [*_TRAIN, _TEST]}
    else:
        contents = _read_archive(location)
    train = [load_batch(contents[name], name) for name in _TRAIN]
    x_train = np.concatenate([images for images, _ in train])
    y_train = np.concatenate([labels for _, labels in train])
    x_test, y_test = load_batch(contents[_TEST], _TEST)
    return (x_train, y_train), (x_test, y_test)


def load_batch(content, name='batch'):
    """The images (n, 32, 32, 3) and labels (n, 1), both uint8, of one pickled batch.

    Args:
        content: The bytes of a batch file.
        name: The file's name, for error messages.
    """
    batch = loads(content)
    if not isinstance(batch, dict):
        raise ValueError(f'cifar10: {name} holds a {type(batch).__name__}, not a batch dict')
    batch = {key.decode('utf-8') if isinstance(key, bytes) else key: value
             for key, value in batch.items()}
    data, labels = batch.get('data'), batch.get('labels')
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 \
            or data.shape[1] != 3 * 32 * 32:
        raise ValueError(f'cifar10: the "data" of {name} must be a uint8 array of shape '
                         f'(n, 3072), got {getattr(data, "shape", type(data).__name__)}')
    labels = np.asarray(labels)
    if labels.shape != (len(data),) or labels.dtype.kind not in 'iu' \
            or (labels.size and not 0 <= labels.min() <= labels.max() <= 9):
        raise ValueError(f'cifar10: the "labels" of {name} must be {len(data)} integers '
                         f'from 0 to 9')
    # Each row holds the red, green and blue planes in turn: (n, 3, 32, 32) -> channels last.
    images = data.reshape(len(data), 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels.astype(np.uint8).reshape(-1, 1)


def _read_file(directory, name):
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'cifar10: {name} is missing from {directory}; {_WHERE}')
    with open(path, 'rb') as file:
        return file.read()


def _read_archive(path):
    """The batch files' bytes, read from the archive without extracting it to disk."""
    try:
        with tarfile.open(path, 'r:*') as archive:
            return {name: _read_member(archive, path, name) for name in [*_TRAIN, _TEST]}
    except tarfile.TarError as error:
        raise ValueError(f'cifar10: {path} is not a tar archive ({error}); {_WHERE}') from None


def _read_member(archive, path, name):
    try:
        member = archive.getmember(f'{_FOLDER}/{name}')
    except KeyError:
        raise FileNotFoundError(f'cifar10: {path} lacks {_FOLDER}/{name}; {_WHERE}') from None
    if not member.isfile():
        raise ValueError(f'cifar10: {_FOLDER}/{name} in {path} is not a file')
    return archive.extractfile(member).read()
