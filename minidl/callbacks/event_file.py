"""TensorBoard event files, written without TensorFlow or protobuf.

An event file is a sequence of TFRecord records, each framing one
serialized ``Event`` protocol buffer::

    uint64 length | uint32 masked CRC-32C of length | data | uint32 masked CRC-32C of data

(little endian). The first event carries only ``file_version``; the others a
``Summary`` whose values are scalars (``simple_value``) or histograms
(``HistogramProto``). The few protobuf messages needed are encoded here by
hand; their field numbers are those of TensorFlow's ``event.proto`` and
``summary.proto``:

    Event:          wall_time = 1 (double), step = 2 (int64),
                    file_version = 3 (string), summary = 5 (Summary)
    Summary:        value = 1 (repeated Value)
    Summary.Value:  tag = 1 (string), simple_value = 2 (float),
                    histo = 5 (HistogramProto)
    HistogramProto: min = 1, max = 2, num = 3, sum = 4, sum_squares = 5
                    (doubles), bucket_limit = 6, bucket = 7 (packed doubles)
"""

import os
import socket
import struct
import time

import numpy as np


def _crc32c_table():
    # CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, one entry per byte value.
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    """The CRC-32C (Castagnoli) checksum of ``data`` (bytes), as TFRecord uses."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TFRecord's masked checksum: rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data):
    """``data`` framed as one TFRecord record."""
    length = struct.pack('<Q', len(data))
    return (length + struct.pack('<I', masked_crc32c(length)) + data
            + struct.pack('<I', masked_crc32c(data)))


# ----- protocol buffer encoding -------------------------------------------------

def _varint(value):
    value &= (1 << 64) - 1  # negative int64 values take ten bytes, as two's complement
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _key(field, wire_type):
    return _varint(field << 3 | wire_type)


def _double(field, value):
    return _key(field, 1) + struct.pack('<d', value)


def _float(field, value):
    return _key(field, 5) + struct.pack('<f', value)


def _int64(field, value):
    return _key(field, 0) + _varint(int(value))


def _bytes(field, data):
    return _key(field, 2) + _varint(len(data)) + data


def _packed_doubles(field, values):
    return _bytes(field, struct.pack(f'<{len(values)}d', *values))


def event(step, wall_time=None, summary=None, file_version=None):
    """A serialized ``Event`` (``summary`` is an already serialized ``Summary``)."""
    data = _double(1, time.time() if wall_time is None else wall_time) + _int64(2, step)
    if file_version is not None:
        data += _bytes(3, file_version.encode())
    if summary is not None:
        data += _bytes(5, summary)
    return data


def scalar_summary(scalars):
    """A serialized ``Summary`` holding each ``(tag, value)`` of ``scalars``."""
    return b''.join(_bytes(1, _bytes(1, tag.encode()) + _float(2, value))
                    for tag, value in scalars)


def histogram_summary(tag, values, bins=30):
    """A serialized ``Summary`` holding a histogram of ``values`` (any shape).

    The buckets are ``bins`` equal ones between the smallest and the largest
    value (numpy's, which widen a constant array to ±0.5 around it); ``min``
    and ``max`` are the outer bucket edges, which TensorBoard takes as the
    first bucket's left edge and the last one's right edge. NaN and infinite
    values are left out (a diverged weight still gets a histogram).
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[np.isfinite(values)]
    counts, edges = np.histogram(values, bins=bins)
    histogram = (_double(1, edges[0]) + _double(2, edges[-1]) + _double(3, values.size)
                 + _double(4, values.sum()) + _double(5, np.dot(values, values))
                 + _packed_doubles(6, edges[1:].tolist())
                 + _packed_doubles(7, counts.astype(np.float64).tolist()))
    return _bytes(1, _bytes(1, tag.encode()) + _bytes(5, histogram))


class EventFileWriter:
    """Writes events to a new ``events.out.tfevents.<time>.<host>`` file in ``log_dir``.

    Args:
        log_dir: The directory (made if missing) that TensorBoard's
            ``--logdir`` is pointed at.
    """

    def __init__(self, log_dir):
        os.makedirs(log_dir, exist_ok=True)
        base = os.path.join(log_dir, f'events.out.tfevents.{int(time.time()):010d}.'
                                     f'{socket.gethostname()}')
        self.path, self._file, copy = base, None, 0
        while self._file is None:  # two writers started in the same second get two files
            try:
                self._file = open(self.path, 'xb')
            except FileExistsError:
                copy += 1
                self.path = f'{base}.{copy}'
        self.write(event(0, file_version='brain.Event:2'))

    def write(self, serialized_event):
        """Append one serialized ``Event``."""
        self._file.write(tfrecord(serialized_event))

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()
