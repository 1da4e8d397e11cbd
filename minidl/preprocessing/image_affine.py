"""Affine image transforms (rotation, shift, shear, zoom) resampled bilinearly in numpy.

Each output pixel is mapped back to a point of the input image through one
3x3 matrix, and the input is sampled there by bilinear interpolation (what
scipy.ndimage.affine_transform does with ``order=1``, which Keras 2 calls).
Points that fall outside the image are filled as ``fill_mode`` says.
"""

import numpy as np

FILL_MODES = ('constant', 'nearest', 'reflect', 'wrap')

# Rotations by multiples of 90 degrees and integer shifts should land exactly
# on pixels, but cos(pi/2) is 6e-17, not 0; source coordinates this close to
# an integer are taken to be that integer.
_SNAP_TOLERANCE = 1e-9


def transform_matrix(theta=0, tx=0, ty=0, shear=0, zx=1, zy=1):
    """The 3x3 matrix that maps output (row, col) offsets to input offsets.

    The parts are composed in Keras 2's order, rotation @ shift @ shear @
    zoom, each acting on (row, col) coordinates relative to the centre.

    Args:
        theta: Rotation angle in degrees.
        tx: Shift along the rows (pixels); a positive shift moves the image up.
        ty: Shift along the columns (pixels); a positive shift moves it left.
        shear: Shear angle in degrees.
        zx: Zoom factor along the rows (below 1 enlarges the image).
        zy: Zoom factor along the columns.
    """
    matrix = np.eye(3)
    if theta:
        angle = np.deg2rad(theta)
        matrix = matrix @ np.array([[np.cos(angle), -np.sin(angle), 0],
                                    [np.sin(angle), np.cos(angle), 0],
                                    [0, 0, 1]])
    if tx or ty:
        matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]], dtype=float)
    if shear:
        angle = np.deg2rad(shear)
        matrix = matrix @ np.array([[1, -np.sin(angle), 0], [0, np.cos(angle), 0], [0, 0, 1]])
    if zx != 1 or zy != 1:
        matrix = matrix @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]], dtype=float)
    return matrix


def centered(matrix, height, width):
    """``matrix`` made to act about the image centre ((height - 1) / 2, (width - 1) / 2).

    Keras 2 uses (height / 2 + 0.5, width / 2 + 0.5), one pixel past the
    centre, so its rotations and zooms also shift the image by up to a pixel;
    about the true centre a 90 degree rotation of a square image is exactly
    ``np.rot90``.
    """
    center_row, center_col = (height - 1) / 2, (width - 1) / 2
    to_center = np.array([[1, 0, center_row], [0, 1, center_col], [0, 0, 1]])
    from_center = np.array([[1, 0, -center_row], [0, 1, -center_col], [0, 0, 1]])
    return to_center @ matrix @ from_center


def _wrapped_index(index, size, fill_mode):
    """Pixel indices for integer positions outside [0, size), per fill mode."""
    if fill_mode == 'reflect':  # abcd -> ...dcba|abcd|dcba...
        index = np.mod(index, 2 * size)
        return np.where(index >= size, 2 * size - 1 - index, index)
    if fill_mode == 'wrap':  # abcd -> ...abcd|abcd|abcd...
        return np.mod(index, size)
    return np.clip(index, 0, size - 1)  # 'nearest' (and 'constant', masked later)


def affine_sample(image, matrix, fill_mode='nearest', cval=0.0):
    """Resample a (height, width, channels) image: output[p] = image[matrix @ p].

    Args:
        image: Array of shape (height, width, channels).
        matrix: 3x3 (or 2x3) matrix mapping output (row, col, 1) to input (row, col).
        fill_mode: 'constant' (``cval`` for points outside the image, as
            scipy's 'constant'), 'nearest' (the closest edge pixel),
            'reflect' (mirrored about the edge, abcd|dcba) or 'wrap' (periodic).
        cval: The fill value for 'constant'.

    Returns:
        The resampled image, same shape and a floating dtype.
    """
    if fill_mode not in FILL_MODES:
        raise ValueError(f'fill_mode must be one of {FILL_MODES}, got {fill_mode!r}')
    height, width, channels = image.shape
    rows, cols = np.meshgrid(np.arange(height, dtype=float), np.arange(width, dtype=float),
                             indexing='ij')
    source = [matrix[axis, 0] * rows + matrix[axis, 1] * cols + matrix[axis, 2]
              for axis in (0, 1)]
    source = [np.where(np.abs(s - np.round(s)) < _SNAP_TOLERANCE, np.round(s), s)
              for s in source]
    low = [np.floor(s) for s in source]
    fraction = [s - f for s, f in zip(source, low)]
    low = [f.astype(np.int64) for f in low]
    sizes = (height, width)
    pixels = image.reshape(height * width, channels)
    result = 0.0
    for row_step in (0, 1):
        row = _wrapped_index(low[0] + row_step, height, fill_mode)
        row_weight = fraction[0] if row_step else 1 - fraction[0]
        for col_step in (0, 1):
            col = _wrapped_index(low[1] + col_step, width, fill_mode)
            col_weight = fraction[1] if col_step else 1 - fraction[1]
            weight = (row_weight * col_weight)[..., None]
            result = result + weight * pixels[row * width + col]
    if fill_mode == 'constant':
        outside = np.zeros((height, width), dtype=bool)
        for s, size in zip(source, sizes):
            outside |= (s < 0) | (s > size - 1)
        result = np.where(outside[..., None], cval, result)
    return result.astype(np.result_type(image.dtype, np.float32), copy=False)


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=0, col_axis=1,
                           channel_axis=2, fill_mode='nearest', cval=0.0):
    """Rotate, shift, shear and zoom one image about its centre (Keras's function).

    Args:
        x: One image, a 3-D array.
        theta: Rotation angle in degrees.
        tx: Shift along the rows, in pixels.
        ty: Shift along the columns, in pixels.
        shear: Shear angle in degrees.
        zx: Zoom factor along the rows (below 1 zooms in).
        zy: Zoom factor along the columns.
        row_axis: Axis of ``x`` holding the rows.
        col_axis: Axis holding the columns.
        channel_axis: Axis holding the channels.
        fill_mode: 'constant', 'nearest', 'reflect' or 'wrap': how points
            outside the image are filled.
        cval: The fill value for 'constant'.

    Returns:
        The transformed image, same shape (``x`` itself when there is nothing to do).
    """
    x = np.asarray(x)
    if x.ndim != 3 or sorted((row_axis, col_axis, channel_axis)) != [0, 1, 2]:
        raise ValueError(f'apply_affine_transform: expected one 3-D image and three distinct '
                         f'axes, got shape {x.shape} and axes {(row_axis, col_axis, channel_axis)}')
    if not (theta or tx or ty or shear) and zx == 1 and zy == 1:
        return x
    order = (row_axis, col_axis, channel_axis)
    image = np.transpose(x, order)
    matrix = centered(transform_matrix(theta, tx, ty, shear, zx, zy), *image.shape[:2])
    result = affine_sample(image, matrix, fill_mode, cval)
    return np.transpose(result, np.argsort(order))
