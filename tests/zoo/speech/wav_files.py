"""Writing small WAV files for the tests, with the ``wave`` module or byte by byte."""

import struct
import wave as wavefile

import numpy as np


def write_wav(path, samples, rate, width=2):
    """Write float ``samples`` in [-1, 1) (``(n,)`` or ``(n, channels)``) as a PCM WAV file."""
    samples = np.asarray(samples, np.float64)
    if samples.ndim == 1:
        samples = samples[:, None]
    scale = 2.0 ** (8 * width - 1)
    integers = np.clip(np.round(samples * scale), -scale, scale - 1).astype(np.int64)
    if width == 1:
        data = (integers + 128).astype(np.uint8).tobytes()
    elif width == 3:
        data = (integers.reshape(-1, 1) >> np.array([0, 8, 16])).astype(np.uint8).tobytes()
    else:
        data = integers.astype({2: '<i2', 4: '<i4'}[width]).tobytes()
    with wavefile.open(str(path), 'wb') as writer:
        writer.setnchannels(samples.shape[1])
        writer.setsampwidth(width)
        writer.setframerate(rate)
        writer.writeframes(data)
    return path


def write_float_wav(path, samples, rate):
    """A 32-bit IEEE float WAV (format tag 3), which the ``wave`` module does not read."""
    data = np.asarray(samples, '<f4').tobytes()
    fmt = struct.pack('<HHIIHH', 3, 1, rate, rate * 4, 4, 32)
    body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt + b'data' + struct.pack(
        '<I', len(data)) + data
    path.write_bytes(b'RIFF' + struct.pack('<I', len(body)) + body)
    return path
