"""MNIST from local files: 60000 training and 10000 test images of handwritten digits.

``load_data(path)`` reads either

* a directory with the four IDX files of the original distribution,
  ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
  ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each may be
  gzip-compressed, ending in ``.gz``), as published at
  https://yann.lecun.com/exdb/mnist/ and its mirrors (Fashion-MNIST uses the
  same names and format, and loads the same way); or
* Keras's ``mnist.npz`` (arrays ``x_train``, ``y_train``, ``x_test``,
  ``y_test``), read without unpickling anything.

When ``path`` is a plain ``.npz`` file name found neither where given nor in
``~/.keras/datasets``, it is fetched as Keras 2 fetches it: ``get_file`` from
Keras's origin, checked against Keras's MD5, into minidl's cache
(``~/.minidl/datasets``). Offline that fails at once, saying where to put
the file.
"""

import gzip
import math
import os
import struct

import numpy as np

from minidl.datasets.files import locate
from minidl.data.downloads import cache_path, get_file

# Where Keras 2.2.4's mnist.load_data fetches mnist.npz, and that file's MD5.
ORIGIN = 'https://s3.amazonaws.com/img-datasets/mnist.npz'
MD5 = '8a61469f7ea1b51cbae51d4f78837e45'

_FILES = {'x_train': 'train-images-idx3-ubyte', 'y_train': 'train-labels-idx1-ubyte',
          'x_test': 't10k-images-idx3-ubyte', 'y_test': 't10k-labels-idx1-ubyte'}
_WHERE = ('download the four files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, '
          't10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) from '
          'https://yann.lecun.com/exdb/mnist/ or a mirror such as '
          'https://ossci-datasets.s3.amazonaws.com/mnist/ into one directory, and pass its path')

# The third byte of an IDX file's magic number names the element type (big-endian).
_IDX_TYPES = {0x08: '>u1', 0x09: '>i1', 0x0B: '>i2', 0x0C: '>i4', 0x0D: '>f4', 0x0E: '>f8'}


def load_data(path='mnist.npz'):
    """The MNIST images and labels.

    Args:
        path: A directory holding the four IDX files, or an ``.npz`` file as
            Keras saves it. A relative path that does not exist is also
            looked up under ``~/.keras/datasets`` (where Keras keeps
            ``mnist.npz``); a plain ``.npz`` name found in neither is
            downloaded (see the module docstring).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images of shape
        (n, 28, 28) with values 0 to 255, and uint8 labels of shape (n,).

    Raises:
        FileNotFoundError: If ``path`` or one of the files is missing and
            cannot be downloaded; the message says where to get them and
            where to put them.
        ValueError: If a file is not in the expected format.
    """
    location = locate(path)
    if location is None and _downloadable(path):
        location = _download(path)
    if location is None:
        raise FileNotFoundError(f'mnist: {path} does not exist; {_WHERE}')
    if os.path.isdir(location):
        arrays = {key: read_idx(_find(location, name)) for key, name in _FILES.items()}
    else:
        arrays = _read_npz(location)
    for part in ('train', 'test'):
        images, labels = arrays[f'x_{part}'], arrays[f'y_{part}']
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f'mnist: the {part} images (shape {images.shape}) and labels '
                             f'(shape {labels.shape}) do not match: expected (n, rows, cols) '
                             f'and (n,)')
    return (arrays['x_train'], arrays['y_train']), (arrays['x_test'], arrays['y_test'])


def read_idx(path):
    """The array stored in the IDX file ``path`` (gzip-compressed if it ends in .gz).

    Raises:
        ValueError: If the file is not IDX or its size does not match its header.
    """
    opener = gzip.open if os.fspath(path).endswith('.gz') else open
    with opener(path, 'rb') as file:
        content = file.read()
    if len(content) < 4 or content[:2] != b'\0\0' or content[2] not in _IDX_TYPES:
        raise ValueError(f'{path} is not an IDX file (its magic number is {content[:4]!r})')
    header = 4 + 4 * content[3]
    if len(content) < header:
        raise ValueError(f'{path} is truncated: its header is incomplete')
    shape = struct.unpack(f'>{content[3]}I', content[4:header])
    dtype = np.dtype(_IDX_TYPES[content[2]])
    expected = math.prod(shape) * dtype.itemsize
    if len(content) - header != expected:
        raise ValueError(f'{path} holds {len(content) - header} bytes of data; its header '
                         f'(shape {shape}, {dtype.name}) says {expected}')
    array = np.frombuffer(content, dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder('='))


def _downloadable(path):
    """Whether ``path`` names a file the way Keras's ``load_data(path='mnist.npz')`` does."""
    path = os.fspath(path)
    return path.endswith('.npz') and os.path.basename(path) == path


def _download(name):
    """Keras's mnist.npz, fetched into minidl's cache as ``name``.

    Raises:
        FileNotFoundError: It cannot be fetched (offline, say); the message
            names the file to place in the cache and the argument to pass.
    """
    try:
        return get_file(name, origin=ORIGIN, file_hash=MD5, cache_subdir='datasets')
    except OSError as error:
        raise FileNotFoundError(
            f'mnist: {name} is not in the working directory or ~/.keras/datasets and could '
            f'not be downloaded from {ORIGIN} ({error}). Place Keras\'s mnist.npz (MD5 {MD5}) '
            f'at {cache_path(name, "datasets")}, or pass load_data(path=...) the path of '
            f'mnist.npz or of a directory holding the four IDX files') from error


def _find(directory, name):
    for candidate in (name, name + '.gz'):
        path = os.path.join(directory, candidate)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f'mnist: {name} (or {name}.gz) is missing from {directory}; {_WHERE}')


def _read_npz(path):
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ValueError(f'mnist: cannot read {path} ({error}); pass the directory of the IDX '
                         f'files or Keras\'s mnist.npz') from None
    if not hasattr(archive, 'files'):
        raise ValueError(f'mnist: {path} is a single .npy array; an MNIST .npz holds x_train, '
                         f'y_train, x_test and y_test')
    with archive:
        missing = [key for key in _FILES if key not in archive.files]
        if missing:
            raise ValueError(f'mnist: {path} lacks the arrays {missing}; an MNIST .npz holds '
                             f'x_train, y_train, x_test and y_test')
        return {key: archive[key] for key in _FILES}
