"""Single-image transforms: flips, channel and brightness shifts, and Keras's random_* helpers.

The random helpers draw from a :class:`minidl.compute.Generator`: a fresh one
when given an integer ``seed``, the one given, or minidl's default generator
when ``seed`` is None (so ``minidl.set_seed`` makes them repeatable).
"""

import numpy as np

from minidl.compute import Generator, default_generator
from minidl.preprocessing.image_affine import apply_affine_transform


def generator_from(seed):
    """The Generator to draw from for ``seed``: an int, a Generator, or None (the default)."""
    if seed is None:
        return default_generator()
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


def uniform(generator, low, high):
    """One float drawn uniformly from [low, high)."""
    return float(generator.uniform((), low, high, dtype='float64'))


def flip_axis(x, axis):
    """``x`` reversed along ``axis`` (a copy)."""
    return np.flip(np.asarray(x), axis).copy()


def apply_channel_shift(x, intensity, channel_axis=0):
    """Add ``intensity`` to every channel, clipped to the image's own value range.

    Args:
        x: One image, a 3-D array.
        intensity: The value added.
        channel_axis: Axis holding the channels (unused: every channel gets
            the same shift; kept for Keras's signature).
    """
    x = np.asarray(x)
    return np.clip(x + intensity, x.min(), x.max())


def apply_brightness_shift(x, brightness):
    """Scale an image's brightness by ``brightness``, as Keras 2 does through Pillow.

    Keras converts the image to 8 bits (shifted so its minimum is at least 0
    and stretched so its maximum is 255), lets Pillow's ImageEnhance multiply
    it by ``brightness`` and converts back; this computes the same values in
    numpy: a result in [0, 255] with whole-number values.

    Args:
        x: One image, a 3-D array.
        brightness: The factor (1 leaves the 8-bit image unchanged).
    """
    dtype = np.result_type(np.float32, np.asarray(x).dtype)
    x = np.asarray(x, dtype=np.float64)
    x = x + max(-x.min(), 0)
    if x.max() != 0:
        x = x / x.max()
    eight_bit = np.floor(x * 255)
    result = np.floor(np.clip(eight_bit * brightness, 0, 255))
    return result.astype(dtype, copy=False)


def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode='nearest', cval=0.0,
                    seed=None):
    """Rotate one image by an angle drawn from [-rg, rg) degrees."""
    return apply_affine_transform(x, theta=uniform(generator_from(seed), -rg, rg),
                                  row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval)


def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode='nearest',
                 cval=0.0, seed=None):
    """Shift one image by fractions of its size drawn from [-hrg, hrg) and [-wrg, wrg)."""
    generator = generator_from(seed)
    x = np.asarray(x)
    tx = uniform(generator, -hrg, hrg) * x.shape[row_axis]
    ty = uniform(generator, -wrg, wrg) * x.shape[col_axis]
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval)


def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode='nearest',
                 cval=0.0, seed=None):
    """Shear one image by an angle drawn from [-intensity, intensity) degrees."""
    shear = uniform(generator_from(seed), -intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval)


def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode='nearest',
                cval=0.0, seed=None):
    """Zoom one image by row and column factors drawn independently from ``zoom_range``."""
    if len(zoom_range) != 2:
        raise ValueError(f'zoom_range must be a tuple or list of two floats, got {zoom_range!r}')
    zx = zy = 1
    if tuple(zoom_range) != (1, 1):
        generator = generator_from(seed)
        zx, zy = uniform(generator, *zoom_range), uniform(generator, *zoom_range)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval)


def random_channel_shift(x, intensity_range, channel_axis=0, seed=None):
    """Shift the channels by an intensity drawn from [-intensity_range, intensity_range)."""
    intensity = uniform(generator_from(seed), -intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis)


def random_brightness(x, brightness_range, seed=None):
    """Scale the brightness by a factor drawn from ``brightness_range`` (two floats)."""
    if len(brightness_range) != 2:
        raise ValueError(f'brightness_range must be a tuple or list of two floats, '
                         f'got {brightness_range!r}')
    return apply_brightness_shift(x, uniform(generator_from(seed), *brightness_range))


def draw_shift(generator, shift_range, size):
    """A shift in pixels drawn as Keras 2's width_shift_range / height_shift_range say.

    A float draws from [-shift_range, shift_range); an int n draws an integer
    from (-n, n); a list draws one of its entries and a random sign. Ranges
    whose largest entry is below 1 are fractions of ``size``.
    """
    values = np.asarray(shift_range)
    if values.ndim == 0 and not isinstance(shift_range, (int, np.integer)):
        shift = uniform(generator, -float(shift_range), float(shift_range))
    else:
        choices = np.arange(int(shift_range)) if values.ndim == 0 else values.ravel()
        shift = float(choices[int(generator.integers(0, len(choices)))])
        shift = shift if int(generator.integers(0, 2)) else -shift
    return shift * size if np.max(values) < 1 else shift
