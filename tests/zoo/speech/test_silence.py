"""Finding speech between silences, on waves built from tones, zeros and noise."""

import numpy as np

from zoo.speech.silence import speech_segments

RATE = 8000


def _parts(*parts, noise=0.0):
    """A wave of ``(seconds, amplitude)`` parts: a 300 Hz tone, or silence for amplitude 0."""
    waves = [amplitude * np.sin(2 * np.pi * 300 * np.arange(int(seconds * RATE)) / RATE)
             for seconds, amplitude in parts]
    wave = np.concatenate(waves)
    return wave + noise * np.random.default_rng(0).standard_normal(wave.size)


def test_silence_at_the_ends_is_trimmed_and_long_pauses_split():
    wave = _parts((0.5, 0), (0.3, 0.5), (1.0, 0), (0.4, 0.2), (0.2, 0))
    margin = int(0.03 * RATE)
    assert speech_segments(wave, RATE) == [(4000 - margin, 6400 + margin),
                                           (14400 - margin, 17600 + margin)]
    assert speech_segments(wave, RATE, pause=None) == [(4000 - margin, 17600 + margin)]
    # A pause shorter than `pause` does not split.
    assert len(speech_segments(_parts((0.3, 0.5), (0.3, 0), (0.3, 0.5)), RATE)) == 1


def test_background_noise_is_not_speech():
    wave = _parts((0.5, 0), (0.5, 0.5), (0.5, 0), noise=0.01)
    (start, end), = speech_segments(wave, RATE)
    assert abs(start - 4000) <= 0.04 * RATE and abs(end - 8000) <= 0.04 * RATE


def test_a_silent_wave_has_no_speech():
    assert speech_segments(np.zeros(RATE), RATE) == []
    steady = np.random.default_rng(1).standard_normal(RATE) * 0.01
    assert speech_segments(steady, RATE) == []
