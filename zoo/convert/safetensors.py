"""The safetensors format, read and written with numpy alone (no code runs on load).

A file is an 8-byte little-endian header length N, N bytes of UTF-8 JSON,
then the data: the JSON maps each tensor's name to ``{"dtype", "shape",
"data_offsets": [begin, end]}`` (byte offsets into the data) and may hold
``"__metadata__"``, a mapping of strings to strings. Data is little-endian
and C-ordered; the tensors cover the data exactly, without gaps or overlaps
(the format forbids both, so a file cannot hide a second payload).

:func:`read_safetensors` checks all of this before it reads a tensor and
raises a ValueError naming the file and the problem.
"""

import json
import math
import os

import numpy as np

from minidl.data.durable import replacing

# The reference implementation refuses headers above 100 MB: a length beyond
# it is a damaged or hostile file, not a real model.
MAX_HEADER_BYTES = 100_000_000

# Numpy dtypes of the format's dtypes. BF16 has none: it is read as 16-bit
# words and widened to float32 (its upper half), which is exact.
DTYPES = {
    'F64': np.dtype('<f8'), 'F32': np.dtype('<f4'), 'F16': np.dtype('<f2'),
    'BF16': np.dtype('<u2'), 'I64': np.dtype('<i8'), 'I32': np.dtype('<i4'),
    'I16': np.dtype('<i2'), 'I8': np.dtype('i1'), 'U8': np.dtype('u1'),
    'BOOL': np.dtype('?'),
}
_CODES = {dtype.newbyteorder('='): code for code, dtype in DTYPES.items() if code != 'BF16'}


def read_safetensors(path):
    """The tensors and metadata of the safetensors file ``path``.

    Args:
        path: A ``.safetensors`` file.

    Returns:
        ``(arrays, metadata)``: a dict of name -> numpy array (BF16 tensors
        as float32, the others in their own dtype), and the file's
        ``__metadata__`` dict (empty when it has none).

    Raises:
        ValueError: If the file is not valid safetensors; the message names
            the file and what is wrong.
    """
    path = os.fspath(path)
    with open(path, 'rb') as file:
        size = os.fstat(file.fileno()).st_size
        header_length = _header_length(path, file.read(8), size)
        header = _parse_header(path, file.read(header_length))
        metadata = _metadata(path, header.pop('__metadata__', {}))
        entries = {name: _entry(path, name, value) for name, value in header.items()}
        _check_coverage(path, entries, size - 8 - header_length)
        arrays = {}
        for name, (dtype, shape, begin, end) in entries.items():
            buffer = bytearray(end - begin)
            file.seek(8 + header_length + begin)
            if file.readinto(buffer) != len(buffer):
                raise ValueError(f'{path}: the file ended inside tensor {name!r}')
            arrays[name] = _decode(path, name, buffer, dtype, shape)
    return arrays, metadata


def _header_length(path, prefix, size):
    if len(prefix) < 8:
        raise ValueError(f'{path}: {size} bytes is too short for a safetensors file '
                         f'(it starts with an 8-byte header length)')
    length = int.from_bytes(prefix, 'little')
    if length > MAX_HEADER_BYTES:
        raise ValueError(f'{path}: header length {length} exceeds the format\'s limit of '
                         f'{MAX_HEADER_BYTES} bytes (damaged file or not safetensors)')
    if 8 + length > size:
        raise ValueError(f'{path}: header length {length} runs beyond the end of the file '
                         f'({size} bytes); the file is truncated or not safetensors')
    return length


def _parse_header(path, raw):
    def unique(pairs):
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError(f'{path}: the header names a tensor twice')
        return dict(pairs)

    try:
        header = json.loads(raw.decode('utf-8'), object_pairs_hook=unique)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f'{path}: the header is not UTF-8 JSON ({error})') from error
    except RecursionError:  # json nests one call per level: a crafted header can exhaust it
        raise ValueError(f'{path}: the header nests too deeply to be a safetensors '
                         f'header') from None
    if not isinstance(header, dict):
        raise ValueError(f'{path}: the header must be a JSON object, got '
                         f'{type(header).__name__}')
    return header


def _metadata(path, metadata):
    if not isinstance(metadata, dict) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in metadata.items()):
        raise ValueError(f'{path}: __metadata__ must map strings to strings, got {metadata!r}')
    return metadata


def _entry(path, name, value):
    """``(dtype code, shape, begin, end)`` of one header entry, checked."""
    where = f'{path}: tensor {name!r}'
    if not isinstance(value, dict) or set(value) != {'dtype', 'shape', 'data_offsets'}:
        raise ValueError(f'{where}: expected keys dtype, shape and data_offsets, got {value!r}')
    dtype, shape, offsets = value['dtype'], value['shape'], value['data_offsets']
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f'{where}: dtype {dtype!r} is not supported (supported: '
                         f'{", ".join(DTYPES)})')
    if not isinstance(shape, list) or not all(_is_count(size) for size in shape):
        raise ValueError(f'{where}: shape must be a list of non-negative integers, got {shape!r}')
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(map(_is_count, offsets)) \
            or offsets[0] > offsets[1]:
        raise ValueError(f'{where}: data_offsets must be [begin, end] with 0 <= begin <= end, '
                         f'got {offsets!r}')
    expected = math.prod(shape) * DTYPES[dtype].itemsize
    if offsets[1] - offsets[0] != expected:
        raise ValueError(f'{where}: data_offsets {offsets} span {offsets[1] - offsets[0]} bytes, '
                         f'but shape {shape} of {dtype} needs {expected}')
    return dtype, tuple(shape), offsets[0], offsets[1]


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_coverage(path, entries, data_size):
    position = 0
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda item: item[1][2:]):
        if end > data_size:
            raise ValueError(f'{path}: tensor {name!r} has data_offsets [{begin}, {end}] beyond '
                             f'the {data_size} bytes of data; the file is truncated or damaged')
        if begin < position:
            raise ValueError(f'{path}: tensor {name!r} at bytes [{begin}, {end}] overlaps the '
                             f'tensor before it, which ends at {position}')
        if begin > position:
            raise ValueError(f'{path}: bytes [{position}, {begin}] of the data belong to no '
                             f'tensor (the format allows no gaps)')
        position = end
    if position != data_size:
        raise ValueError(f'{path}: bytes [{position}, {data_size}] at the end of the data belong '
                         f'to no tensor (the format allows no gaps)')


def _decode(path, name, buffer, dtype, shape):
    array = np.frombuffer(buffer, DTYPES[dtype]).reshape(shape)
    if dtype == 'BF16':
        return (array.astype(np.uint32) << 16).view(np.float32)
    if dtype == 'BOOL' and array.view(np.uint8).max(initial=0) > 1:
        raise ValueError(f'{path}: tensor {name!r} of dtype BOOL holds bytes other than 0 and 1')
    return array.astype(array.dtype.newbyteorder('='), copy=False)


def save_safetensors(arrays, path, metadata=None):
    """Write ``arrays`` to ``path`` in the safetensors format, atomically.

    The file is written next to ``path`` under a temporary name, fsync'ed
    and renamed over ``path`` only when complete, so an error or a crash
    never leaves a damaged file in place of a good one.

    Args:
        arrays: Mapping of tensor name -> numpy array (float64/32/16,
            int64/32/16/8, uint8 or bool), written in the mapping's order.
        path: The file to write.
        metadata: Optional mapping of strings to strings, stored as
            ``__metadata__``.

    Raises:
        ValueError: For a name that is not a non-empty string (or is
            ``__metadata__``), an unsupported dtype, or metadata that is
            not strings.
    """
    path = os.fspath(path)
    header, blobs, position = {}, [], 0
    for name, value in arrays.items():
        if not isinstance(name, str) or not name or name == '__metadata__':
            raise ValueError(f'save_safetensors: tensor names must be non-empty strings other '
                             f'than "__metadata__", got {name!r}')
        array = np.asarray(value, order='C')
        code = _CODES.get(array.dtype.newbyteorder('='))
        if code is None:
            raise ValueError(f'save_safetensors: tensor {name!r} has dtype {array.dtype}, which '
                             f'safetensors cannot hold (supported: {", ".join(_CODES.values())})')
        array = array.astype(DTYPES[code], copy=False)
        header[name] = {'dtype': code, 'shape': list(array.shape),
                        'data_offsets': [position, position + array.nbytes]}
        blobs.append(array)
        position += array.nbytes
    if metadata is not None:
        header = {'__metadata__': _metadata(path, dict(metadata)), **header}
    encoded = json.dumps(header, separators=(',', ':')).encode('utf-8')
    # Spaces pad the header so the data starts 8-byte aligned, as the reference writer does.
    encoded += b' ' * (-len(encoded) % 8)
    _write_atomically(path, [len(encoded).to_bytes(8, 'little'), encoded, *blobs])


def _write_atomically(path, chunks):
    with replacing(path) as file:  # the whole new file or the old one (minidl.data.durable)
        for chunk in chunks:
            file.write(chunk)  # numpy arrays as their raw (C-ordered) bytes
