"""Reading WAV files into float waves, with errors that say what is wrong with the file.

Python's :mod:`wave` module reads uncompressed PCM WAV files (format tag 1)
of any sampling rate and channel count, with 1 to 4 bytes per sample; all of
them are read here. Everything else (compressed WAVs such as A-law, mu-law or
ADPCM, 32-bit float WAVs, ``WAVE_FORMAT_EXTENSIBLE`` headers, files that are
not WAV at all, empty files) raises a :class:`ValueError` naming the file,
what was found and how to convert it.
"""

import os
import wave as wavefile

import numpy as np

CONVERT_HINT = ('convert it to 16-bit PCM first, e.g. `sox in.wav -b 16 -e signed-integer '
                'out.wav` or `ffmpeg -i in.wav -c:a pcm_s16le out.wav`')


def _samples(data, width):
    """Interleaved little-endian PCM bytes of ``width`` bytes per sample as float64 in [-1, 1)."""
    if width == 1:  # 8-bit WAV samples are unsigned, 128 being silence.
        return (np.frombuffer(data, np.uint8).astype(np.float64) - 128.0) / 128.0
    if width == 3:
        # numpy has no 24-bit type: place the three bytes in the top of an int32,
        # which keeps the sign, then scale.
        triples = np.frombuffer(data, np.uint8).reshape(-1, 3).astype(np.uint32)
        joined = (triples[:, 0] << 8) | (triples[:, 1] << 16) | (triples[:, 2] << 24)
        return joined.view(np.int32).astype(np.float64) / 2.0 ** 31
    kind = {2: '<i2', 4: '<i4'}[width]
    return np.frombuffer(data, kind).astype(np.float64) / 2.0 ** (8 * width - 1)


def read_wav(path):
    """The mono wave and sampling rate of a PCM WAV file.

    Channels are averaged (a stereo recording becomes the mean of its left
    and right channels).

    Args:
        path: A path (str or ``os.PathLike``) of a WAV file.

    Returns:
        ``(wave, rate)``: float64 array of the samples in [-1, 1), rate in Hz.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If the file is empty, holds no samples, is not a WAV file,
            or is a WAV the ``wave`` module cannot read (compressed or float).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'no such WAV file: {path!r}')
    if os.path.getsize(path) == 0:
        raise ValueError(f'{path}: the file is empty (0 bytes), not a WAV file')
    try:
        with wavefile.open(path, 'rb') as reader:
            channels, width = reader.getnchannels(), reader.getsampwidth()
            rate, frames = reader.getframerate(), reader.getnframes()
            data = reader.readframes(frames)
    except EOFError as error:
        raise ValueError(f'{path}: the WAV header is cut short ({error})') from None
    except wavefile.Error as error:
        message = str(error)
        if message.startswith('unknown format'):
            # Format tags: 3 is IEEE float, 6/7 A-law/mu-law, 0xFFFE extensible.
            raise ValueError(f'{path}: a WAV file of a format other than plain PCM '
                             f'({message}: compressed, float or extensible); '
                             f'{CONVERT_HINT}') from None
        raise ValueError(f'{path}: not a WAV file that can be read ({message}); '
                         f'{CONVERT_HINT}') from None
    if width not in (1, 2, 3, 4):
        raise ValueError(f'{path}: {8 * width}-bit samples are not supported; {CONVERT_HINT}')
    usable = len(data) // (channels * width) * channels * width  # a cut-off last frame
    if usable == 0:
        raise ValueError(f'{path}: the WAV file holds no samples')
    if rate <= 0:
        raise ValueError(f'{path}: the WAV header gives a sampling rate of {rate} Hz')
    samples = _samples(data[:usable], width).reshape(-1, channels)
    return samples.mean(axis=1), rate
