"""The windowed-sinc resampler against signals whose samples at any rate are known."""

import numpy as np
import pytest

from zoo.speech.resample import resample


def _tone(frequency, rate, seconds, phase=0.3):
    return np.sin(2 * np.pi * frequency * np.arange(int(seconds * rate)) / rate + phase)


@pytest.mark.parametrize('rate_in, rate_out', [
    (8000, 22050), (16000, 22050), (44100, 22050), (48000, 22050), (22050, 16000),
    (11025, 22050), (7919, 22050)])
def test_a_tone_becomes_the_same_tone_sampled_at_the_new_rate(rate_in, rate_out):
    # Two tones below both Nyquist frequencies: the output is their exact
    # samples at the new rate, away from the ends (where zeros lie beyond).
    wave = _tone(440, rate_in, 0.5) + 0.5 * _tone(3000, rate_in, 0.5, phase=1.0)
    output = resample(wave, rate_in, rate_out)
    assert output.shape == (-(-wave.size * rate_out // rate_in),)
    expected = _tone(440, rate_out, 1.0)[:output.size] + 0.5 * _tone(3000, rate_out, 1.0,
                                                                      phase=1.0)[:output.size]
    inner = slice(int(0.05 * rate_out), -int(0.05 * rate_out))
    np.testing.assert_allclose(output[inner], expected[inner], atol=1e-4)


def test_downsampling_removes_what_the_new_rate_cannot_hold():
    # 15 kHz is above 22050 Hz's Nyquist frequency: kept, it would alias to 7050 Hz.
    output = resample(_tone(15000, 48000, 0.5), 48000, 22050)
    inner = output[1000:-1000]
    assert np.sqrt(np.mean(inner ** 2)) < 1e-3  # the tone's RMS was 0.71: below -57 dB


def test_same_rate_copies_and_bad_rates_are_refused():
    wave = _tone(100, 8000, 0.01)
    copied = resample(wave, 8000, 8000)
    np.testing.assert_array_equal(copied, wave)
    assert copied is not wave
    for rates in ((0, 8000), (8000, 22050.5), (True, 8000)):
        with pytest.raises(ValueError, match='positive integer'):
            resample(wave, *rates)
    with pytest.raises(ValueError, match='mono'):
        resample(np.zeros((4, 2)), 8000, 16000)
