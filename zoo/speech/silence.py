"""Finding the speech in a recording: trimming silence at the ends, splitting at long pauses.

The acoustic models were trained on utterances whose leading and trailing
silence was cut (:func:`zoo.speech.corpus.trim_silence`), each a few seconds
long; a recording with a second of silence before the speech, or several
sentences in a row, is far from that, so :func:`speech_segments` gives the
parts of a recording to transcribe one by one.

The wave is cut into 10 ms frames and each frame's energy taken in dB. A
frame is loud when it is within :data:`RANGE_DB` of the loudest frame and at
least :data:`ABOVE_FLOOR_DB` above the noise floor (the 10th percentile of
the frames' levels, so steady background noise is not speech). Speech runs
from the first loud frame to the last; a stretch of quiet frames of at least
``pause`` seconds inside it ends one segment and starts the next. Each
segment keeps ``margin`` seconds of its surroundings, as training did.
"""

import numpy as np

FRAME = 0.01
RANGE_DB = 40.0
ABOVE_FLOOR_DB = 10.0
# Energies below this (in dB of a full-scale wave) count as digital silence.
FLOOR_DB = -100.0


def frame_levels(wave, rate, frame=FRAME):
    """The energy in dB (of full scale) of each ``frame``-second frame of ``wave``."""
    size = max(1, int(round(frame * rate)))
    count = -(-len(wave) // size)
    padded = np.zeros(count * size)
    padded[:len(wave)] = wave
    power = np.mean(padded.reshape(count, size) ** 2, axis=1)
    return 10.0 * np.log10(np.maximum(power, 10.0 ** (FLOOR_DB / 10.0)))


def speech_segments(wave, rate, pause=0.6, margin=0.03):
    """Where the speech is in a mono wave: ``[(start, end), ...]`` sample ranges.

    Args:
        wave: 1-D float array.
        rate: Its sampling rate in Hz.
        pause: A quiet stretch at least this long (seconds) splits the speech
            into segments; ``None`` never splits (one segment, ends trimmed).
        margin: Seconds kept before and after each segment's loud frames.

    Returns:
        A list of ``(start, end)`` pairs, in order; empty when nothing in the
        wave is loud enough to be speech (digital silence, or noise alone
        with no frame standing out of it).
    """
    levels = frame_levels(wave, rate)
    size = max(1, int(round(FRAME * rate)))
    threshold = max(levels.max() - RANGE_DB, np.percentile(levels, 10) + ABOVE_FLOOR_DB)
    loud = np.flatnonzero((levels >= threshold) & (levels > FLOOR_DB))
    if loud.size == 0:
        return []
    gaps = np.diff(loud) - 1  # quiet frames between consecutive loud frames
    splits = (np.flatnonzero(gaps * FRAME >= pause) if pause is not None
              else np.array([], np.int64))
    firsts = np.concatenate([[loud[0]], loud[splits + 1]])
    lasts = np.concatenate([loud[splits], [loud[-1]]])
    keep = int(round(margin * rate))
    return [(max(0, first * size - keep), min(len(wave), (last + 1) * size + keep))
            for first, last in zip(firsts, lasts)]
