"""Log spectrogram and log mel filterbank features of a mono wave, in numpy.

A wave is cut into frames of ``window`` seconds every ``hop`` seconds; each
frame is multiplied by a periodic Hann window and zero-padded to ``n_fft``,
the next power of two at least the window's length in samples. Its power
spectrum ``|FFT|**2`` (``n_fft // 2 + 1`` bins, not scaled) is either kept as
it is (``kind='spectrogram'``) or summed through triangular mel filters
(``kind='mel'``). The result is ``log(max(value, LOG_FLOOR))`` and, by default,
normalised per utterance so that every bin has zero mean and unit variance
over the utterance's frames.
"""

import numpy as np

# Power below this is taken as this before the log, so silence (exact zeros,
# as a synthesiser writes) gives a finite value: log(1e-10) = -23.0.
LOG_FLOOR = 1e-10


def hz_to_mel(frequency):
    """The HTK mel value ``2595 log10(1 + f / 700)`` of a frequency in Hz."""
    return 2595.0 * np.log10(1.0 + np.asarray(frequency, np.float64) / 700.0)


def mel_to_hz(mel):
    """The frequency in Hz of an HTK mel value (inverse of :func:`hz_to_mel`)."""
    return 700.0 * (10.0 ** (np.asarray(mel, np.float64) / 2595.0) - 1.0)


def fft_size(window_samples):
    """The next power of two at least ``window_samples``."""
    return 1 << max(0, int(window_samples) - 1).bit_length()


def mel_filterbank(rate, n_fft, bins):
    """Triangular mel filters over the bins of a power spectrum.

    The ``bins + 2`` edge frequencies are equally spaced on the HTK mel scale
    from 0 Hz to ``rate / 2``; filter ``i`` rises linearly from edge ``i`` to
    its centre, edge ``i + 1`` (where it is 1), and falls to 0 at edge
    ``i + 2``. Filters are not area-normalised.

    Args:
        rate: Sampling rate in Hz.
        n_fft: FFT size; the spectrum has ``n_fft // 2 + 1`` bins, bin ``k`` at
            ``k * rate / n_fft`` Hz.
        bins: Number of filters.

    Returns:
        float64 array ``(bins, n_fft // 2 + 1)``: multiply a power spectrum
        (frames, n_fft // 2 + 1) by its transpose to get mel energies.
    """
    if bins < 1 or n_fft < 2 or rate <= 0:
        raise ValueError(f'mel_filterbank needs rate > 0, n_fft >= 2 and bins >= 1, '
                         f'got rate={rate}, n_fft={n_fft}, bins={bins}')
    edges = mel_to_hz(np.linspace(0.0, hz_to_mel(rate / 2.0), bins + 2))
    frequencies = np.arange(n_fft // 2 + 1) * rate / n_fft
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (frequencies - lower) / (centre - lower)
    falling = (upper - frequencies) / (upper - centre)
    return np.maximum(0.0, np.minimum(rising, falling))


def _as_float_wave(wave):
    wave = np.asarray(wave)
    if wave.ndim != 1:
        raise ValueError(f'features need a mono wave (one dimension), got shape {wave.shape}; '
                         'mix a stereo wave down first, e.g. wave.mean(axis=1)')
    if wave.size == 0:
        raise ValueError('features need a non-empty wave, got 0 samples')
    if wave.dtype == np.int16:
        return wave.astype(np.float64) / 32768.0
    if not np.issubdtype(wave.dtype, np.floating):
        raise TypeError(f'features take int16 or float waves, got dtype {wave.dtype}')
    return wave.astype(np.float64)


def power_spectrum(wave, rate, window=0.02, hop=0.01):
    """Power spectra of Hann-windowed frames of a mono wave.

    Args:
        wave: 1-D int16 (scaled to [-1, 1) by 1/32768) or float array.
        rate: Sampling rate in Hz.
        window: Frame length in seconds.
        hop: Distance between frame starts in seconds.

    Returns:
        float64 array ``(frames, n_fft // 2 + 1)`` with
        ``frames = 1 + (len(wave) - window_samples) // hop_samples``. A wave
        shorter than one window is zero-padded to one window (one frame).
    """
    wave = _as_float_wave(wave)
    window_samples = int(round(window * rate))
    hop_samples = int(round(hop * rate))
    if window_samples < 1 or hop_samples < 1:
        raise ValueError(f'window ({window} s) and hop ({hop} s) must each be at least one '
                         f'sample at rate {rate}')
    if wave.size < window_samples:
        wave = np.pad(wave, (0, window_samples - wave.size))
    frames = 1 + (wave.size - window_samples) // hop_samples
    starts = np.arange(frames)[:, None] * hop_samples
    framed = wave[starts + np.arange(window_samples)]
    # Periodic Hann window (as scipy.signal.get_window('hann')).
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(window_samples) / window_samples)
    spectrum = np.fft.rfft(framed * hann, n=fft_size(window_samples), axis=1)
    return spectrum.real ** 2 + spectrum.imag ** 2


def features(wave, rate, kind='mel', window=0.02, hop=0.01, bins=40, normalize=True):
    """Log mel filterbank or log spectrogram frames of a mono wave.

    Args:
        wave: 1-D int16 (scaled to [-1, 1) by 1/32768) or float array. A wave
            shorter than one window is zero-padded to one frame.
        rate: Sampling rate in Hz (any: 16000, 22050, ...).
        kind: ``'mel'`` (``bins`` triangular HTK mel filters from 0 Hz to
            ``rate / 2``, see :func:`mel_filterbank`) or ``'spectrogram'``
            (the whole power spectrum, ``n_fft // 2 + 1`` bins; ``bins`` is
            ignored).
        window: Frame length in seconds (Hann window; FFT size the next power
            of two at least the window in samples).
        hop: Distance between frame starts in seconds.
        bins: Number of mel filters.
        normalize: If True, subtract each bin's mean over the frames and
            divide by its standard deviation (a bin with standard deviation 0
            is only centred).

    Returns:
        float32 array ``(frames, bins)`` (or ``(frames, n_fft // 2 + 1)``) of
        ``log(max(power, LOG_FLOOR))``, ``frames = 1 + (len(wave) -
        window_samples) // hop_samples``.

    Raises:
        ValueError: For a stereo or empty wave, an unknown ``kind``, or a
            window or hop shorter than one sample.
        TypeError: For a wave that is neither int16 nor float.
    """
    if kind not in ('mel', 'spectrogram'):
        raise ValueError(f"kind must be 'mel' or 'spectrogram', got {kind!r}")
    power = power_spectrum(wave, rate, window, hop)
    if kind == 'mel':
        power = power @ mel_filterbank(rate, 2 * (power.shape[1] - 1), bins).T
    values = np.log(np.maximum(power, LOG_FLOOR))
    if normalize:
        values = values - values.mean(axis=0)
        deviation = values.std(axis=0)
        values = values / np.where(deviation > 0, deviation, 1.0)
    return values.astype(np.float32)
