"""Making synthetic speech sound recorded: a room, background noise, a narrow channel.

:func:`augment` applies, each drawn from the given numpy Generator:

- with probability 0.5, a room: convolution with an exponentially decaying
  noise impulse response of 50 to 250 ms (-60 dB at its end);
- with probability :data:`CLEAN_PROBABILITY`, no noise at all, the wave
  keeping the exact zeros a synthesiser writes between words (so a clean
  file, as ``espeak-ng -w`` writes, is not new to a model); otherwise white
  or brown noise at an SNR of 5 to 40 dB;
- with probability :data:`NARROWBAND_PROBABILITY`, a telephone or
  wideband-codec channel: resampled to 8000 or 16000 Hz and back
  (:mod:`zoo.speech.resample`), which removes everything above 4 or 8 kHz.

The result is scaled to a peak of 1.
"""

import numpy as np

from zoo.speech.resample import resample

CLEAN_PROBABILITY = 0.1
NARROWBAND_PROBABILITY = 0.2
SNR_DB = (5.0, 40.0)


def _convolve(signal, response):
    size = 1 << (signal.size + response.size - 2).bit_length()
    return np.fft.irfft(np.fft.rfft(signal, size) * np.fft.rfft(response, size), size)[
        :signal.size]


def _room(signal, rate, rng):
    length = int(rng.uniform(0.05, 0.25) * rate)
    decay = np.exp(-6.9 * np.arange(length) / length)
    response = rng.standard_normal(length) * decay * rng.uniform(0.1, 0.4)
    response[0] = 1.0
    return _convolve(signal, response)


def _noise(size, rng):
    noise = rng.standard_normal(size)
    if rng.random() < 0.5:  # brown-ish: power falling as 1/f^2, no DC
        spectrum = np.fft.rfft(noise)
        spectrum[1:] /= np.arange(1, spectrum.size)
        spectrum[0] = 0.0
        noise = np.fft.irfft(spectrum, size)
    return noise


def augment(wave, rate, rng):
    """``wave`` (float, mono) through a random room, noise and channel; peak 1.

    Args:
        wave: 1-D float array.
        rate: Its sampling rate in Hz (an integer).
        rng: ``numpy.random.Generator``; every draw comes from it, in a fixed order.

    Returns:
        float64 array of the same length.
    """
    signal = np.asarray(wave, np.float64)
    if rng.random() < 0.5:
        signal = _room(signal, rate, rng)
    if rng.random() >= CLEAN_PROBABILITY:
        noise = _noise(signal.size, rng)
        snr = rng.uniform(*SNR_DB)
        power = np.mean(signal ** 2)
        signal = signal + noise * np.sqrt(power / 10 ** (snr / 10)
                                          / max(np.mean(noise ** 2), 1e-20))
    if rng.random() < NARROWBAND_PROBABILITY:
        narrow = 8000 if rng.random() < 0.5 else 16000
        signal = resample(resample(signal, rate, narrow), narrow, rate)[:signal.size]
    return signal / max(np.abs(signal).max(), 1e-12)
