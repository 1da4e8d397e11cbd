"""Read pickled *data* without ever running code (for CIFAR-10's python batches).

CIFAR-10's python version stores each batch as a pickled dict of strings,
lists of ints and one numpy array. Python's ``pickle`` would run whatever
callables a file names, so minidl does not use it: this module interprets
the pickle opcodes itself and builds only plain values (None, bools, ints,
floats, str, bytes, tuples, lists, dicts) and numpy arrays of numbers or
strings. The callables that a file may name are replaced by small functions
of this module that turn bytes into arrays; any other name (``os.system``,
``builtins.eval``, ...) and any opcode that would create or call other
objects is refused with :class:`RestrictedPickleError`.

Arrays of Python objects (numpy's dtype ``object``, as ``np.save`` writes
Keras's imdb.npz and reuters.npz, whose samples are lists of word indices)
are read only when the caller asks for them with ``allow_object_arrays``:
their elements are then the plain values this reader built, never raw
memory.

Protocols 0 to 5 are read (CIFAR-10 was written by Python 2; tests write
with Python 3). Strings of Python 2 are returned as bytes, as
``pickle.load(file, encoding='bytes')`` does.
"""

import codecs
import math
import struct
import types

import numpy as np


class RestrictedPickleError(ValueError):
    """The data names something other than plain values and numpy arrays, or is malformed."""


class _NdarrayType:
    """Stands for ``numpy.ndarray``, the first argument of ``_reconstruct``."""


class _PendingArray:
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


class _PendingDtype:
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
    return _PendingDtype(dtype)


def _reconstruct(subtype, shape, typecode):
    if not isinstance(subtype, _NdarrayType):
        raise RestrictedPickleError('only numpy.ndarray arrays are read')
    return _PendingArray()


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


_GLOBALS = {('numpy', 'ndarray'): _NdarrayType(), ('numpy', 'dtype'): _dtype,
            ('_codecs', 'encode'): _encode, ('__builtin__', 'bytes'): _empty_bytes,
            ('builtins', 'bytes'): _empty_bytes}
for _module in ('numpy.core', 'numpy._core'):
    _GLOBALS[f'{_module}.multiarray', '_reconstruct'] = _reconstruct
    _GLOBALS[f'{_module}.multiarray', 'scalar'] = _scalar
    _GLOBALS[f'{_module}.numeric', '_frombuffer'] = _from_bytes  # (buffer, dtype, shape, order)
_CALLABLES = {value for value in _GLOBALS.values() if isinstance(value, types.FunctionType)}


def loads(data, allow_object_arrays=False):
    """The value pickled in ``data`` (bytes), built without running any code.

    Args:
        data: The pickled bytes.
        allow_object_arrays: Whether numpy arrays of dtype ``object`` are
            read (their elements being the plain values listed above);
            refused by default.

    Raises:
        RestrictedPickleError: If the data names a callable other than numpy's
            array reconstruction, uses an opcode that makes other objects, or
            is malformed.
    """
    try:
        return _Reader(bytes(data), allow_object_arrays).run()
    except RestrictedPickleError:
        raise
    except (TypeError, ValueError, IndexError, KeyError, struct.error,
            UnicodeDecodeError) as error:
        raise RestrictedPickleError(f'malformed pickle data: {error}') from None


def _value(item):
    """``item`` as stored in a container or returned: pending objects become what they built."""
    if isinstance(item, _PendingDtype):
        return item.dtype
    if isinstance(item, _PendingArray):
        if item.array is None:
            raise RestrictedPickleError('an array is used before its contents were read')
        return item.array
    return item


class _Reader:
    """A pickle virtual machine that knows only data-building opcodes."""

    def __init__(self, data, allow_object_arrays=False):
        self.data, self.position = data, 0
        self.allow_object_arrays = allow_object_arrays
        self.stack, self.marks, self.memo = [], [], {}

    def read(self, count):
        if count < 0 or self.position + count > len(self.data):
            raise RestrictedPickleError('the pickle data is truncated')
        chunk = self.data[self.position:self.position + count]
        self.position += count
        return chunk

    def unpack(self, layout):
        return struct.unpack(layout, self.read(struct.calcsize(layout)))[0]

    def line(self):
        end = self.data.find(b'\n', self.position)
        if end < 0:
            raise RestrictedPickleError('the pickle data is truncated')
        return self.read(end + 1 - self.position)[:-1]

    def pop_mark(self):
        start = self.marks.pop()
        items = [_value(item) for item in self.stack[start:]]
        del self.stack[start:]
        return items

    def run(self):
        while True:
            code = self.read(1)
            if code == b'.':
                if len(self.stack) != 1 or self.marks:
                    raise RestrictedPickleError('the pickle data ends in an unfinished state')
                return _value(self.stack.pop())
            handler = _OPCODES.get(code)
            if handler is None:
                raise RestrictedPickleError(f'refusing pickle opcode {code!r} at byte '
                                            f'{self.position - 1}: it does not build plain data')
            handler(self)

    def push_global(self, module, name):
        if not (isinstance(module, str) and isinstance(name, str)) \
                or (module, name) not in _GLOBALS:
            raise RestrictedPickleError(f'refusing to load {module}.{name}: only plain values '
                                        f'and numpy arrays are read, never code')
        self.stack.append(_GLOBALS[module, name])

    def reduce(self):
        arguments = self.stack.pop()
        function = self.stack[-1]
        if not (isinstance(function, types.FunctionType) and function in _CALLABLES) \
                or not isinstance(arguments, tuple):
            raise RestrictedPickleError('the pickle data calls something that is not an allowed '
                                        'numpy reconstruction function')
        result = function(*arguments)
        if isinstance(result, _PendingDtype) and result.dtype.kind == 'O' \
                and not self.allow_object_arrays:
            raise RestrictedPickleError('refusing the numpy dtype object: only numbers and '
                                        'strings')
        self.stack[-1] = result

    def build(self):
        state = _value(self.stack.pop())
        target = self.stack[-1]
        if not isinstance(target, (_PendingArray, _PendingDtype)):
            raise RestrictedPickleError(f'refusing to set the state of a {type(target).__name__}')
        target.build(state)

    def set_items(self, items):
        if not isinstance(self.stack[-1], dict):
            raise RestrictedPickleError('SETITEMS needs a dict')
        self.stack[-1].update(_pairs(items))

    def set_item(self):
        value = _value(self.stack.pop())
        self.set_items([_value(self.stack.pop()), value])

    def append(self, items):
        if not isinstance(self.stack[-1], list):
            raise RestrictedPickleError('APPENDS needs a list')
        self.stack[-1].extend(items)

    def string(self):
        """Protocol 0's STRING: a quoted Python literal with escapes."""
        literal = self.line()
        if len(literal) < 2 or literal[0] != literal[-1] or literal[:1] not in (b'"', b"'"):
            raise RestrictedPickleError('bad STRING literal')
        return codecs.escape_decode(literal[1:-1])[0]

    def integer(self):
        """Protocol 0's INT, where 01 and 00 mean True and False."""
        text = self.line()
        if text in (b'01', b'00'):
            return text == b'01'
        return int(text)

    def protocol(self):
        version = self.read(1)[0]
        if version > 5:
            raise RestrictedPickleError(f'unknown pickle protocol {version}')


def _push(make):
    return lambda reader: reader.stack.append(make(reader))


def _sized(layout, convert=bytes):
    return _push(lambda reader: convert(reader.read(reader.unpack(layout))))


def _memo_put(index):
    return lambda reader: reader.memo.__setitem__(index(reader), reader.stack[-1])


def _memo_get(index):
    return _push(lambda reader: reader.memo[index(reader)])


def _tuple(size):
    def make(reader):
        start = len(reader.stack) - size
        if start < 0:
            raise RestrictedPickleError('the pickle stack is empty')
        items = tuple(_value(item) for item in reader.stack[start:])
        del reader.stack[start:]
        return items
    return _push(make)


def _pairs(items):
    if len(items) % 2:
        raise RestrictedPickleError('a dict needs key-value pairs')
    return zip(items[::2], items[1::2])


def _signed(raw):
    return int.from_bytes(raw, 'little', signed=True)


def _utf8(raw):
    return raw.decode('utf-8', 'surrogatepass')


# Opcode -> handler, named as in the pickletools documentation. Absent opcodes
# (INST, OBJ, NEWOBJ, EXT*, PERSID, buffers, sets...) are refused.
_OPCODES = {
    b'\x80': _Reader.protocol,                                        # PROTO
    b'\x95': lambda reader: reader.read(8),                           # FRAME (bytes follow inline)
    b'(': lambda reader: reader.marks.append(len(reader.stack)),      # MARK
    b'N': _push(lambda reader: None),                                 # NONE
    b'\x88': _push(lambda reader: True),                              # NEWTRUE
    b'\x89': _push(lambda reader: False),                             # NEWFALSE
    b'I': _push(_Reader.integer),                                     # INT
    b'J': _push(lambda reader: reader.unpack('<i')),                  # BININT
    b'K': _push(lambda reader: reader.read(1)[0]),                    # BININT1
    b'M': _push(lambda reader: reader.unpack('<H')),                  # BININT2
    b'L': _push(lambda reader: int(reader.line().rstrip(b'L'))),      # LONG
    b'\x8a': _push(lambda reader: _signed(reader.read(reader.read(1)[0]))),    # LONG1
    b'\x8b': _push(lambda reader: _signed(reader.read(reader.unpack('<i')))),  # LONG4
    b'F': _push(lambda reader: float(reader.line())),                 # FLOAT
    b'G': _push(lambda reader: reader.unpack('>d')),                  # BINFLOAT
    b'S': _push(_Reader.string),                                      # STRING (Python 2: bytes)
    b'T': _sized('<i'),                                               # BINSTRING
    b'U': _sized('<B'),                                               # SHORT_BINSTRING
    b'B': _sized('<I'),                                               # BINBYTES
    b'C': _sized('<B'),                                               # SHORT_BINBYTES
    b'\x8e': _sized('<Q'),                                            # BINBYTES8
    b'\x96': _sized('<Q', bytearray),                                 # BYTEARRAY8
    b'V': _push(lambda reader: reader.line().decode('raw-unicode-escape')),  # UNICODE
    b'X': _sized('<I', _utf8),                                        # BINUNICODE
    b'\x8c': _sized('<B', _utf8),                                     # SHORT_BINUNICODE
    b'\x8d': _sized('<Q', _utf8),                                     # BINUNICODE8
    b')': _tuple(0),                                                  # EMPTY_TUPLE
    b'\x85': _tuple(1),                                               # TUPLE1
    b'\x86': _tuple(2),                                               # TUPLE2
    b'\x87': _tuple(3),                                               # TUPLE3
    b't': _push(lambda reader: tuple(reader.pop_mark())),             # TUPLE
    b']': _push(lambda reader: []),                                   # EMPTY_LIST
    b'l': _push(lambda reader: reader.pop_mark()),                    # LIST
    b'a': lambda reader: reader.append([_value(reader.stack.pop())]),  # APPEND
    b'e': lambda reader: reader.append(reader.pop_mark()),            # APPENDS
    b'}': _push(lambda reader: {}),                                   # EMPTY_DICT
    b'd': _push(lambda reader: dict(_pairs(reader.pop_mark()))),      # DICT
    b's': _Reader.set_item,                                           # SETITEM
    b'u': lambda reader: reader.set_items(reader.pop_mark()),         # SETITEMS
    b'p': _memo_put(lambda reader: int(reader.line())),               # PUT
    b'q': _memo_put(lambda reader: reader.read(1)[0]),                # BINPUT
    b'r': _memo_put(lambda reader: reader.unpack('<I')),              # LONG_BINPUT
    b'\x94': _memo_put(lambda reader: len(reader.memo)),              # MEMOIZE
    b'g': _memo_get(lambda reader: int(reader.line())),               # GET
    b'h': _memo_get(lambda reader: reader.read(1)[0]),                # BINGET
    b'j': _memo_get(lambda reader: reader.unpack('<I')),              # LONG_BINGET
    b'c': lambda reader: reader.push_global(_utf8(reader.line()), _utf8(reader.line())),  # GLOBAL
    b'\x93': lambda reader: reader.push_global(                       # STACK_GLOBAL
        *reversed([reader.stack.pop(), reader.stack.pop()])),
    b'R': _Reader.reduce,                                             # REDUCE
    b'b': _Reader.build,                                              # BUILD
}
