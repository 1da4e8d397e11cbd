"""Which array module (numpy or CuPy) an array belongs to, and conversions."""

import sys

import numpy as np


def _cupy():
    """Return the cupy module if it is already imported, else None.

    An array can only be a CuPy array if CuPy has been imported, so looking in
    ``sys.modules`` avoids importing CuPy (slow, and possibly absent) just to
    classify numpy arrays.
    """
    return sys.modules.get('cupy')


def get_array_module(*arrays):
    """Return the array module (``numpy`` or ``cupy``) of the given arrays."""
    cupy = _cupy()
    if cupy is not None:
        for a in arrays:
            if isinstance(a, cupy.ndarray):
                return cupy
    return np


def is_array(value):
    """True for a numpy or CuPy ndarray."""
    if isinstance(value, np.ndarray):
        return True
    cupy = _cupy()
    return cupy is not None and isinstance(value, cupy.ndarray)


def to_numpy(array):
    """Return a numpy array with the contents of ``array`` (copying from a GPU)."""
    if isinstance(array, np.ndarray):
        return array
    cupy = _cupy()
    if cupy is not None and isinstance(array, cupy.ndarray):
        return cupy.asnumpy(array)
    return np.asarray(array)
