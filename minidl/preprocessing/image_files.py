"""Image files and arrays: load_img, save_img, img_to_array, array_to_img, and class folders.

Reading and writing images needs Pillow, which is imported only when one of
these functions runs, so that ``import minidl`` works with numpy alone.
"""

import io
import os
import warnings

import numpy as np

from minidl import config
from minidl.backend import normalize_data_format

COLOR_MODES = {'grayscale': 'L', 'rgb': 'RGB', 'rgba': 'RGBA'}
IMAGE_EXTENSIONS = ('png', 'jpg', 'jpeg', 'bmp', 'ppm', 'tif', 'tiff')


def pil_image():
    """Pillow's Image module, or an ImportError that says how to get it."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("reading and writing images needs Pillow: pip install 'minidl[image]' "
                          '(or pip install Pillow)') from None
    return Image


def warn_unless_image_channels(shape, channel_axis, where):
    """Warn when a batch of images does not have 1, 3 or 4 channels on ``channel_axis``."""
    if shape[channel_axis] not in (1, 3, 4):
        warnings.warn(f'{where}: expected images with 1, 3 or 4 channels on axis {channel_axis}, '
                      f'got shape {shape}', stacklevel=3)


def load_img(path, grayscale=False, color_mode='rgb', target_size=None, interpolation='nearest'):
    """Read an image file into a Pillow image.

    Args:
        path: Path of the image file.
        grayscale: Deprecated; True means ``color_mode='grayscale'``.
        color_mode: 'grayscale', 'rgb' or 'rgba': the image is converted to it.
        target_size: None for the file's size, or ``(height, width)`` to resize to.
        interpolation: Resampling for the resize: 'nearest', 'bilinear',
            'bicubic', 'lanczos', 'box' or 'hamming'.

    Returns:
        A ``PIL.Image.Image``.

    Raises:
        ImportError: If Pillow is not installed.
        ValueError: For an unknown color mode or interpolation, or a file
            that is not an image (the message names the file).
    """
    if grayscale:
        warnings.warn("load_img: grayscale=True is deprecated; use color_mode='grayscale'",
                      DeprecationWarning, stacklevel=2)
        color_mode = 'grayscale'
    if color_mode not in COLOR_MODES:
        raise ValueError(f"color_mode must be 'grayscale', 'rgb' or 'rgba', got {color_mode!r}")
    image_module = pil_image()
    with open(path, 'rb') as file:  # read whole, so that no file handle stays open
        content = file.read()
    try:
        image = image_module.open(io.BytesIO(content))
    except image_module.UnidentifiedImageError:
        # Pillow's own message names the in-memory copy, not the file.
        raise ValueError(f'load_img: {path} is not an image Pillow can read '
                         f'({len(content):,} bytes)') from None
    if image.mode != COLOR_MODES[color_mode]:
        image = image.convert(COLOR_MODES[color_mode])
    if target_size is not None:
        size = (int(target_size[1]), int(target_size[0]))
        if image.size != size:
            methods = {name: getattr(image_module.Resampling, name.upper())
                       for name in ('nearest', 'bilinear', 'bicubic', 'lanczos', 'box', 'hamming')}
            if interpolation not in methods:
                raise ValueError(f'interpolation must be one of {sorted(methods)}, '
                                 f'got {interpolation!r}')
            image = image.resize(size, methods[interpolation])
    return image


def img_to_array(img, data_format=None, dtype=None):
    """A Pillow image as a 3-D array (height, width, channels) or (channels, height, width).

    Args:
        img: A Pillow image (or anything ``np.asarray`` turns into a 2-D or 3-D array).
        data_format: 'channels_last', 'channels_first', or None for ``image_data_format()``.
        dtype: The array's dtype; minidl's default float dtype when None.
    """
    data_format = normalize_data_format(data_format)
    x = np.asarray(img, dtype=dtype or config.default_dtype)
    if x.ndim == 2:
        x = x[..., None]
    if x.ndim != 3:
        raise ValueError(f'img_to_array: expected a 2-D or 3-D image, got shape {x.shape}')
    return np.moveaxis(x, -1, 0) if data_format == 'channels_first' else x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3-D array as a Pillow image ('L', 'RGB' or 'RGBA' for 1, 3 or 4 channels).

    Args:
        x: One image, a 3-D array.
        data_format: 'channels_last', 'channels_first', or None for ``image_data_format()``.
        scale: Shift the values so the minimum is at least 0 and stretch them
            so the maximum is 255 (otherwise they are cast to 8 bits as they are).
        dtype: dtype of the intermediate array; minidl's default float dtype when None.
    """
    data_format = normalize_data_format(data_format)
    x = np.array(x, dtype=dtype or config.default_dtype)
    if x.ndim != 3:
        raise ValueError(f'array_to_img: expected one image of rank 3, got shape {x.shape}')
    if data_format == 'channels_first':
        x = np.moveaxis(x, 0, -1)
    if scale:
        x = x + max(-np.min(x), 0)
        if np.max(x) != 0:
            x = x / np.max(x)
        x = x * 255
    modes = {1: 'L', 3: 'RGB', 4: 'RGBA'}
    if x.shape[2] not in modes:
        raise ValueError(f'array_to_img: an image needs 1, 3 or 4 channels, got {x.shape[2]}')
    pixels = x.astype(np.uint8)
    return pil_image().fromarray(pixels[..., 0] if x.shape[2] == 1 else pixels,
                                 modes[x.shape[2]])


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Write a 3-D array as an image file.

    Args:
        path: Path or file object.
        x: One image, a 3-D array.
        data_format: 'channels_last', 'channels_first', or None for ``image_data_format()``.
        file_format: Format name for Pillow; by default from the file extension.
        scale: As for :func:`array_to_img`.
        **kwargs: Passed on to ``PIL.Image.Image.save``.
    """
    image = array_to_img(x, data_format=data_format, scale=scale)
    if image.mode == 'RGBA' and (file_format or '').lower() in ('jpg', 'jpeg'):
        warnings.warn('save_img: JPEG cannot hold an alpha channel; saving as RGB',
                      stacklevel=2)
        image = image.convert('RGB')
    image.save(path, format=file_format, **kwargs)


def class_folders(directory):
    """The subdirectories of ``directory``, sorted by name."""
    return sorted(name for name in os.listdir(directory)
                  if os.path.isdir(os.path.join(directory, name)))


def images_in(folder, follow_links=False):
    """Paths of the image files under ``folder``, relative to it, in sorted walk order."""
    found = []
    for root, _, files in sorted(os.walk(folder, followlinks=follow_links),
                                 key=lambda walked: walked[0]):
        found.extend(os.path.relpath(os.path.join(root, name), folder) for name in sorted(files)
                     if name.lower().endswith(tuple('.' + ext for ext in IMAGE_EXTENSIONS)))
    return found
