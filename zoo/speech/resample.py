"""Changing a wave's sampling rate: band-limited (windowed-sinc) interpolation in numpy.

Output sample ``n`` of a wave resampled from ``rate_in`` to ``rate_out`` lies
at input position ``t = n * rate_in / rate_out``; it is the sum of the input
samples around ``t`` weighted by a lowpass sinc kernel centred on ``t``,
tapered by a Kaiser window. The kernel's cutoff is the lower of the two
Nyquist frequencies (times :data:`ROLLOFF`, to leave the window room for its
transition band), so downsampling removes what the new rate cannot hold
instead of folding it back as aliases. Positions are computed with integers
(``n * down // up`` for the reduced ratio ``up / down``), so no rounding
drifts over a long file. Samples beyond the wave's ends count as zeros.
"""

import math

import numpy as np

# Zero crossings of the sinc on each side at the output's cutoff: 32 gives a
# stopband around -80 dB with the Kaiser window below.
ZERO_CROSSINGS = 32
KAISER_BETA = 8.6
# Fraction of the lower Nyquist frequency kept as passband.
ROLLOFF = 0.94
# Output samples computed at once (bounds the (chunk, taps) matrix's memory).
_CHUNK = 8192
# Rates whose reduced ratio has more phases than this compute weights per sample.
_MAX_PHASES = 8192


def _kernel(distance, cutoff, half_width):
    """Kernel weights at ``distance`` input samples from the output position."""
    window = np.i0(KAISER_BETA * np.sqrt(np.clip(1.0 - (distance / half_width) ** 2, 0.0, 1.0)))
    return cutoff * np.sinc(cutoff * distance) * window / np.i0(KAISER_BETA)


def resample(wave, rate_in, rate_out):
    """``wave`` sampled at ``rate_out`` instead of ``rate_in``.

    Args:
        wave: 1-D float array (a mono wave).
        rate_in: Its sampling rate in Hz (a positive integer).
        rate_out: The wanted rate in Hz (a positive integer).

    Returns:
        float64 array of ``ceil(len(wave) * rate_out / rate_in)`` samples
        (a copy of ``wave`` when the rates are equal).

    Raises:
        ValueError: For a rate that is not a positive integer or a wave that is not 1-D.
    """
    for name, rate in (('rate_in', rate_in), ('rate_out', rate_out)):
        if not isinstance(rate, (int, np.integer)) or isinstance(rate, bool) or rate <= 0:
            raise ValueError(f'resample: {name} must be a positive integer, got {rate!r}')
    wave = np.asarray(wave, np.float64)
    if wave.ndim != 1:
        raise ValueError(f'resample takes a mono (1-D) wave, got shape {wave.shape}')
    if rate_in == rate_out:
        return wave.copy()
    common = math.gcd(int(rate_in), int(rate_out))
    up, down = int(rate_out) // common, int(rate_in) // common
    # The cutoff in cycles per input sample (1 = the input's Nyquist frequency x 2).
    cutoff = ROLLOFF * min(1.0, up / down)
    half_width = ZERO_CROSSINGS / cutoff
    reach = int(math.ceil(half_width))
    offsets = np.arange(-reach + 1, reach + 1)
    padded = np.concatenate([np.zeros(reach), wave, np.zeros(reach + 1)])
    count = -(-wave.size * up // down)  # ceil without floats
    # One row of weights per phase (position between input samples) when there are
    # few phases, which is every pair of common rates; else weights per sample.
    table = (_kernel(offsets[None, :] - np.arange(up)[:, None] / up, cutoff, half_width)
             if up <= _MAX_PHASES else None)
    output = np.empty(count)
    for start in range(0, count, _CHUNK):
        n = np.arange(start, min(start + _CHUNK, count), dtype=np.int64)
        base = n * down // up
        phase = n * down - base * up
        weights = (table[phase] if table is not None else
                   _kernel(offsets[None, :] - (phase / up)[:, None], cutoff, half_width))
        output[n] = np.einsum('ij,ij->i', padded[base[:, None] + offsets[None, :] + reach],
                              weights)
    return output
