"""The pickle virtual machine: data-building opcodes only.

:class:`_Reader` interprets the opcodes of protocols 0 to 5 that build
plain values (None, bools, ints, floats, str, bytes, tuples, lists, dicts)
and that name, call and fill in the allowed numpy constructors of
:mod:`~minidl.datasets.restricted_pickle.allowed`. Any other opcode
(``INST``, ``OBJ``, ``NEWOBJ``, extensions, persistent ids, buffers, sets, ...)
is refused with :class:`RestrictedPickleError`.
"""

import codecs
import struct
import types

from minidl.datasets.restricted_pickle.allowed import (
    CALLABLES, GLOBALS, RestrictedPickleError, PendingArray, PendingDtype, built_value)


def loads(data, allow_object_arrays=False):
    """The value pickled in ``data`` (bytes), built without running any code.

    Args:
        data: The pickled bytes.
        allow_object_arrays: Whether numpy arrays of dtype ``object`` are
            read (their elements being plain values);
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
        items = [built_value(item) for item in self.stack[start:]]
        del self.stack[start:]
        return items

    def run(self):
        while True:
            code = self.read(1)
            if code == b'.':
                if len(self.stack) != 1 or self.marks:
                    raise RestrictedPickleError('the pickle data ends in an unfinished state')
                return built_value(self.stack.pop())
            handler = _OPCODES.get(code)
            if handler is None:
                raise RestrictedPickleError(f'refusing pickle opcode {code!r} at byte '
                                            f'{self.position - 1}: it does not build plain data')
            handler(self)

    def push_global(self, module, name):
        if not (isinstance(module, str) and isinstance(name, str)) \
                or (module, name) not in GLOBALS:
            raise RestrictedPickleError(f'refusing to load {module}.{name}: only plain values '
                                        f'and numpy arrays are read, never code')
        self.stack.append(GLOBALS[module, name])

    def reduce(self):
        arguments = self.stack.pop()
        function = self.stack[-1]
        if not (isinstance(function, types.FunctionType) and function in CALLABLES) \
                or not isinstance(arguments, tuple):
            raise RestrictedPickleError('the pickle data calls something that is not an allowed '
                                        'numpy reconstruction function')
        result = function(*arguments)
        if isinstance(result, PendingDtype) and result.dtype.kind == 'O' \
                and not self.allow_object_arrays:
            raise RestrictedPickleError('refusing the numpy dtype object: only numbers and '
                                        'strings')
        self.stack[-1] = result

    def build(self):
        state = built_value(self.stack.pop())
        target = self.stack[-1]
        if not isinstance(target, (PendingArray, PendingDtype)):
            raise RestrictedPickleError(f'refusing to set the state of a {type(target).__name__}')
        target.build(state)

    def set_items(self, items):
        if not isinstance(self.stack[-1], dict):
            raise RestrictedPickleError('SETITEMS needs a dict')
        self.stack[-1].update(_pairs(items))

    def set_item(self):
        value = built_value(self.stack.pop())
        self.set_items([built_value(self.stack.pop()), value])

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
        items = tuple(built_value(item) for item in reader.stack[start:])
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
    b'a': lambda reader: reader.append([built_value(reader.stack.pop())]),  # APPEND
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
