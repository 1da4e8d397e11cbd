"""What a restricted pickle may name: plain values, numpy arrays and dtypes, nothing else.

A pickle builds objects by naming callables (``GLOBAL``) and calling them
(``REDUCE``), then setting their state (``BUILD``). :data:`GLOBALS` maps the
few names that numpy's and Python's own pickles of arrays, dtypes and bytes
use to small functions of this module that check their arguments and build
the value from bytes; the pending objects stand for an array or dtype
until the ``BUILD`` that supplies its contents. Every other name is refused
by the reader (:mod:`~minidl.datasets.restricted_pickle.machine`).
"""

import math
import types

import numpy as np


class RestrictedPickleError(ValueError):
    """The data names something other than plain values and numpy arrays, or is malformed."""


class _NdarrayType:
    """Stands for ``numpy.ndarray``, the first argument of ``_reconstruct``."""


class PendingArray:
    """An array made by ``_reconstruct``, whose contents a later BUILD supplies."""

    def __init__(self):
        self.array = None

    def build(self, state):
        # ndarray's state: ([version,] shape, dtype, is_fortran, raw bytes).
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise RestrictedPickleError(f'unexpected array state {str(state)[:100]}')
        shape, dtype, fortran, raw = state[-4:]
        order = 'F' if fortran else 'C'
        if isinstance(dtype, np.dtype) and dtype.kind == 'O':
            array = _object_array(raw, shape, order)
        else:
            array = _from_bytes(raw, dtype, shape, order)
        # As numpy's own unpickling of this form, data of the other byte order is swapped.
        self.array = array.astype(array.dtype.newbyteorder('='), copy=False)


class PendingDtype:
    """A dtype made by ``numpy.dtype(spec)``, whose byte order a later BUILD may set."""

    def __init__(self, dtype):
        self.dtype = dtype

    def build(self, state):
        # dtype's state: (version, byteorder, subarray, names, fields, ...).
        if not isinstance(state, tuple) or len(state) < 5 or state[2:5] != (None, None, None):
            raise RestrictedPickleError('only plain (unstructured) numpy dtypes are read')
        byteorder = _text(state[1])
        if byteorder in ('<', '>'):
            self.dtype = self.dtype.newbyteorder(byteorder)


def _text(value):
    return value.decode('ascii') if isinstance(value, bytes) else value


def _from_bytes(raw, dtype, shape, order):
    if isinstance(raw, str):  # a Python 2 string read as text
        raw = raw.encode('latin-1')
    if not isinstance(raw, (bytes, bytearray)) or not isinstance(dtype, np.dtype):
        raise RestrictedPickleError('an array needs raw bytes and a numpy dtype')
    if dtype.kind == 'O':  # raw bytes would be read as object pointers
        raise RestrictedPickleError('an object array is built from a list of values, '
                                    'never from raw bytes')
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise RestrictedPickleError(f'bad array shape {shape!r}')
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise RestrictedPickleError(f'an array of shape {shape} and dtype {dtype} needs '
                                    f'{math.prod(shape) * dtype.itemsize} bytes, got {len(raw)}')
    return np.frombuffer(raw, dtype).reshape(shape, order=order).copy()


def _object_array(items, shape, order):
    # The items were built by the reader, so they are plain values or arrays.
    if not isinstance(items, list) or not isinstance(shape, tuple) \
            or len(items) != math.prod(shape):
        raise RestrictedPickleError(f'an object array of shape {shape!r} needs a list of '
                                    f'as many values')
    array = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):  # element by element: lists must stay elements
        array[index] = item
    return array.reshape(shape, order=order)


def _dtype(spec, align=False, copy=False):
    try:
        dtype = np.dtype(_text(spec))
    except TypeError as error:
        raise RestrictedPickleError(f'bad dtype {spec!r}') from error
    # No structured or time dtypes; object ones only where the reader allows them.
    if dtype.kind not in 'biufcSUO':
        raise RestrictedPickleError(f'refusing the numpy dtype {dtype}: only numbers and strings')
    return PendingDtype(dtype)


def _reconstruct(subtype, shape, typecode):
    if not isinstance(subtype, _NdarrayType):
        raise RestrictedPickleError('only numpy.ndarray arrays are read')
    return PendingArray()


def _scalar(dtype, raw):
    return _from_bytes(raw, dtype, (), 'C')[()]


def _empty_bytes(*arguments):
    # Python 3 writes b'' for protocols < 3 as a call of bytes without arguments.
    if arguments:
        raise RestrictedPickleError('only bytes() without arguments is read')
    return b''


def _encode(text, encoding):
    # Python 3 writes bytes for protocols < 3 as _codecs.encode(text, 'latin1').
    if not isinstance(text, str) or encoding not in ('latin1', 'latin-1'):
        raise RestrictedPickleError('only latin-1 encoded byte strings are read')
    return text.encode('latin-1')


# (module, name) a pickle may name -> what the reader pushes in its place.
GLOBALS = {('numpy', 'ndarray'): _NdarrayType(), ('numpy', 'dtype'): _dtype,
           ('_codecs', 'encode'): _encode, ('__builtin__', 'bytes'): _empty_bytes,
           ('builtins', 'bytes'): _empty_bytes}
for _module in ('numpy.core', 'numpy._core'):
    GLOBALS[f'{_module}.multiarray', '_reconstruct'] = _reconstruct
    GLOBALS[f'{_module}.multiarray', 'scalar'] = _scalar
    GLOBALS[f'{_module}.numeric', '_frombuffer'] = _from_bytes  # (buffer, dtype, shape, order)
# The functions among them: the only things REDUCE may call.
CALLABLES = {value for value in GLOBALS.values() if isinstance(value, types.FunctionType)}


def built_value(item):
    """``item`` as stored in a container or returned: pending objects become what they built."""
    if isinstance(item, PendingDtype):
        return item.dtype
    if isinstance(item, PendingArray):
        if item.array is None:
            raise RestrictedPickleError('an array is used before its contents were read')
        return item.array
    return item
