"""Read the arrays of an ``.npz`` file, including arrays of Python lists, without unpickling.

``np.save`` stores an array of dtype ``object`` (Keras's imdb.npz and
reuters.npz hold one review or newswire per element, as a list of word
indices) as a pickle after the ``.npy`` header, which ``np.load`` would
read with Python's ``pickle``. Here that part is read by
:mod:`minidl.datasets.restricted_pickle`, which builds only plain values;
arrays of numbers are read by numpy with pickling switched off.
"""

import io
import zipfile

import numpy as np

from minidl.datasets.restricted_pickle import RestrictedPickleError, loads

_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}


def read_npz(path, keys, dataset):
    """The arrays named ``keys`` in the ``.npz`` file ``path``, as a dict.

    Args:
        path: The ``.npz`` file.
        keys: The names of the arrays to read.
        dataset: The data set's name, for error messages.

    Raises:
        ValueError: If the file is not an ``.npz`` archive, lacks one of
            ``keys``, or holds data that would run code when unpickled.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            missing = [key for key in keys if f'{key}.npy' not in names]
            if missing:
                raise ValueError(f'{dataset}: {path} lacks the arrays {missing}; its .npz '
                                 f'holds {list(keys)}')
            return {key: _read_npy(archive.read(f'{key}.npy'), f'{path}:{key}', dataset)
                    for key in keys}
    except zipfile.BadZipFile:
        raise ValueError(f'{dataset}: {path} is not an .npz file (a zip archive of .npy '
                         f'arrays)') from None


def _read_npy(content, name, dataset):
    file = io.BytesIO(content)
    try:
        version = np.lib.format.read_magic(file)
        if version not in _HEADER_READERS:
            raise ValueError(f'unsupported .npy format version {version}')
        shape, fortran_order, dtype = _HEADER_READERS[version](file)
        if not dtype.hasobject:
            return np.lib.format.read_array(io.BytesIO(content), allow_pickle=False)
        array = loads(content[file.tell():], allow_object_arrays=True)
    except (RestrictedPickleError, ValueError) as error:
        raise ValueError(f'{dataset}: cannot read {name} ({error})') from None
    if not isinstance(array, np.ndarray) or array.shape != shape:
        raise ValueError(f'{dataset}: {name} does not hold the array of shape {shape} its '
                         f'header announces')
    return array
