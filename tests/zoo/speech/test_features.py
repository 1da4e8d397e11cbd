import numpy as np
import pytest
from scipy import signal

from zoo.speech.features import LOG_FLOOR, features, mel_filterbank, power_spectrum


def _noise(samples, seed=0):
    return np.random.default_rng(seed).standard_normal(samples)


@pytest.mark.parametrize('rate', [16000, 22050])
def test_power_spectrum_equals_scipy_spectrogram(rate):
    wave = _noise(rate // 2)
    window, hop = int(round(0.02 * rate)), int(round(0.01 * rate))
    n_fft = 512
    _, _, expected = signal.spectrogram(wave, fs=rate, window='hann', nperseg=window,
                                        noverlap=window - hop, nfft=n_fft, detrend=False,
                                        scaling='spectrum', mode='magnitude')
    # scipy's 'magnitude' is |FFT| / sum(window); square it back to raw power.
    expected = (expected * signal.get_window('hann', window).sum()) ** 2
    np.testing.assert_allclose(power_spectrum(wave, rate), expected.T, rtol=1e-9, atol=1e-9)


def test_spectrogram_kind_is_log_power_with_floor():
    rate = 16000
    wave = np.concatenate([np.zeros(800), _noise(1600)])
    power = power_spectrum(wave, rate)
    got = features(wave, rate, kind='spectrogram', normalize=False)
    assert got.shape == (power.shape[0], 257) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.log(np.maximum(power, LOG_FLOOR)), rtol=1e-6)
    assert got[0].max() == np.float32(np.log(LOG_FLOOR))  # silent first frame


@pytest.mark.parametrize('samples, rate, expected', [
    (16000, 16000, 1 + (16000 - 320) // 160),
    (22050, 22050, 1 + (22050 - 441) // 220),
    (320, 16000, 1), (479, 16000, 1), (480, 16000, 2), (100, 16000, 1)])
def test_frame_count(samples, rate, expected):
    assert features(_noise(samples), rate).shape == (expected, 40)


def _htk_centres(rate, bins):
    top = 2595 * np.log10(1 + (rate / 2) / 700)
    edges = 700 * (10 ** (np.arange(bins + 2) * top / (bins + 1) / 2595) - 1)
    return edges


@pytest.mark.parametrize('rate', [16000, 22050])
def test_filter_centres_follow_the_htk_formula(rate):
    n_fft, bins = 2 ** 16, 40
    bank = mel_filterbank(rate, n_fft, bins)
    assert bank.shape == (bins, n_fft // 2 + 1)
    resolution = rate / n_fft
    edges = _htk_centres(rate, bins)
    frequencies = np.arange(n_fft // 2 + 1) * resolution
    # A fine FFT puts each filter's peak within one bin of its centre.
    np.testing.assert_allclose(frequencies[bank.argmax(axis=1)], edges[1:-1], atol=resolution)
    np.testing.assert_allclose(bank.max(axis=1), 1, atol=1e-2)
    # Filter i is zero outside (centre i-1, centre i+1), positive inside.
    for index in range(bins):
        inside = (frequencies > edges[index]) & (frequencies < edges[index + 2])
        assert np.all(bank[index, ~inside] == 0) and np.all(bank[index, inside] > 0)


def test_tone_lands_in_the_nearest_filter():
    rate, bins = 22050, 40
    centres = _htk_centres(rate, bins)[1:-1]
    t = np.arange(rate) / rate
    for index in (10, 20, 30, 38):
        tone = np.sin(2 * np.pi * centres[index] * t)
        energies = features(tone, rate, normalize=False).mean(axis=0)
        assert energies.argmax() == index


def test_normalize_gives_zero_mean_unit_variance():
    got = features(_noise(16000), 16000)
    np.testing.assert_allclose(got.mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(got.std(axis=0), 1, atol=1e-4)


def test_constant_bin_is_centred_not_divided_by_zero():
    got = features(np.zeros(4000), 16000)
    np.testing.assert_allclose(got, 0, atol=1e-6)


def test_int16_is_scaled_like_float():
    wave = (_noise(8000) * 3000).astype(np.int16)
    np.testing.assert_allclose(features(wave, 16000, normalize=False),
                               features(wave / 32768.0, 16000, normalize=False), rtol=1e-6)


@pytest.mark.parametrize('wave, message', [
    (np.zeros((100, 2)), 'mono'), (np.zeros(0), 'non-empty')])
def test_bad_waves_are_refused(wave, message):
    with pytest.raises(ValueError, match=message):
        features(wave, 16000)


def test_bad_kind_and_dtype_are_refused():
    with pytest.raises(ValueError, match='kind'):
        features(np.zeros(1000), 16000, kind='mfcc')
    with pytest.raises(TypeError, match='int16 or float'):
        features(np.zeros(1000, np.int32), 16000)
