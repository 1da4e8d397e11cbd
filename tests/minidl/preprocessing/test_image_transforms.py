"""Image transforms: exact rotations, shifts and flips, scipy's resampling, Pillow's brightness."""

import numpy as np
import pytest

from minidl.preprocessing import image
from minidl.preprocessing.image_affine import centered, transform_matrix

RNG = np.random.default_rng(0)
SQUARE = RNG.random((6, 6, 2)).astype('float32')


@pytest.mark.parametrize('theta, turns', [(90, -1), (-90, 1), (180, 2), (270, 1)])
@pytest.mark.parametrize('fill_mode', ['constant', 'nearest', 'reflect', 'wrap'])
def test_quarter_turns_are_exactly_rot90(theta, turns, fill_mode):
    rotated = image.apply_affine_transform(SQUARE, theta=theta, fill_mode=fill_mode)
    assert np.array_equal(rotated, np.rot90(SQUARE, turns, axes=(0, 1)))


def test_integer_shifts_are_rolls_with_the_fill_mode_at_the_edge():
    x = SQUARE
    # A row shift tx = 2 moves the image up by two rows.
    shifted = image.apply_affine_transform(x, tx=2, fill_mode='constant', cval=-1)
    assert np.array_equal(shifted[:4], x[2:]) and np.all(shifted[4:] == -1)
    shifted = image.apply_affine_transform(x, tx=2, fill_mode='nearest')
    assert np.array_equal(shifted[:4], x[2:]) and np.array_equal(shifted[4:], x[[5, 5]])
    shifted = image.apply_affine_transform(x, tx=2, fill_mode='reflect')
    assert np.array_equal(shifted[4:], x[[5, 4]])
    # A column shift ty = -1 moves it right by one column.
    shifted = image.apply_affine_transform(x, ty=-1, fill_mode='wrap')
    assert np.array_equal(shifted, np.roll(x, 1, axis=1))


def test_axes_can_be_given_in_any_order():
    channels_first = np.transpose(SQUARE, (2, 0, 1))
    rotated = image.apply_affine_transform(channels_first, theta=90, row_axis=1, col_axis=2,
                                           channel_axis=0)
    assert np.array_equal(rotated, np.rot90(channels_first, -1, axes=(1, 2)))
    with pytest.raises(ValueError, match='three distinct axes'):
        image.apply_affine_transform(SQUARE, theta=1, row_axis=0, col_axis=0)


@pytest.mark.parametrize('fill_mode, scipy_mode', [
    ('constant', 'constant'), ('nearest', 'nearest'), ('reflect', 'reflect'),
    ('wrap', 'grid-wrap'),
])
def test_a_general_transform_resamples_like_scipy_order_1(fill_mode, scipy_mode):
    ndimage = pytest.importorskip('scipy.ndimage')
    x = RNG.random((7, 9, 3))
    parameters = dict(theta=23, tx=1.3, ty=-0.7, shear=11, zx=0.9, zy=1.2)
    transformed = image.apply_affine_transform(x, **parameters, fill_mode=fill_mode, cval=0.5)
    # The map from output to input pixel, about the centre, composed here on its own.
    angle, shear = np.deg2rad(23), np.deg2rad(11)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    linear = rotation @ np.array([[1, -np.sin(shear)], [0, np.cos(shear)]]) @ np.diag([0.9, 1.2])
    center = np.array([3.0, 4.0])
    offset = center + rotation @ np.array([1.3, -0.7]) - linear @ center
    expected = np.stack([ndimage.affine_transform(x[..., c], linear, offset, order=1,
                                                  mode=scipy_mode, cval=0.5)
                         for c in range(3)], axis=-1)
    np.testing.assert_allclose(transformed, expected, atol=1e-12)
    matrix = centered(transform_matrix(**parameters), 7, 9)
    np.testing.assert_allclose(matrix[:2], np.column_stack([linear, offset]), atol=1e-12)


def test_flips_and_channel_shift():
    x = np.arange(2 * 3 * 2, dtype='float32').reshape(2, 3, 2)
    assert np.array_equal(image.flip_axis(x, 1), x[:, ::-1])
    shifted = image.apply_channel_shift(x, 5.0, channel_axis=2)
    assert np.array_equal(shifted, np.minimum(x + 5, 11))
    assert np.array_equal(image.apply_channel_shift(x, -20.0), np.zeros_like(x))


def test_brightness_shift_matches_keras_pillow_route():
    pil_enhance = pytest.importorskip('PIL.ImageEnhance')
    x = (RNG.random((5, 4, 3)) * 200).astype('float32')
    for factor in (0.4, 1.0, 1.7):
        through_pillow = pil_enhance.Brightness(image.array_to_img(x)).enhance(factor)
        np.testing.assert_array_equal(image.apply_brightness_shift(x, factor),
                                      image.img_to_array(through_pillow))


def test_random_helpers_are_seeded_and_stay_in_range():
    x = np.transpose(SQUARE, (2, 0, 1))  # Keras's helpers default to channels first
    assert np.array_equal(image.random_rotation(x, 40, seed=3), image.random_rotation(x, 40,
                                                                                     seed=3))
    assert not np.array_equal(image.random_shear(x, 30, seed=1), image.random_shear(x, 30, seed=2))
    assert np.array_equal(image.random_zoom(x, (1, 1)), x)
    shifted = image.random_channel_shift(x, 0.5, seed=0)
    unclipped = (shifted > x.min()) & (shifted < x.max())
    difference = (shifted - x)[unclipped]
    assert unclipped.sum() > x.size // 2 and 0 < abs(difference[0]) < 0.5
    np.testing.assert_allclose(difference, difference[0], atol=1e-6)
    with pytest.raises(ValueError, match='two floats'):
        image.random_zoom(x, (0.5,))


def test_image_files_round_trip(tmp_path):
    pytest.importorskip('PIL')
    pixels = RNG.integers(0, 256, size=(5, 7, 3)).astype('float32')
    path = tmp_path / 'picture.png'
    image.save_img(path, pixels, scale=False)
    loaded = image.load_img(path)
    assert loaded.size == (7, 5) and loaded.mode == 'RGB'
    assert np.array_equal(image.img_to_array(loaded), pixels)
    first = image.img_to_array(loaded, data_format='channels_first', dtype='float64')
    assert first.shape == (3, 5, 7) and first.dtype == np.float64
    gray = image.img_to_array(image.load_img(path, color_mode='grayscale', target_size=(3, 4)))
    assert gray.shape == (3, 4, 1)
    assert image.img_to_array(image.load_img(path, color_mode='rgba')).shape == (5, 7, 4)
    scaled = image.img_to_array(image.array_to_img(pixels - 100))
    assert scaled.min() == 0 and scaled.max() == 255
    with pytest.raises(ValueError, match='color_mode'):
        image.load_img(path, color_mode='cmyk')
    with pytest.raises(ValueError, match='interpolation'):
        image.load_img(path, target_size=(2, 2), interpolation='cubic-ish')
    with pytest.raises(ValueError, match='channels'):
        image.array_to_img(np.zeros((2, 2, 2)))
