"""Glyphs: letters and digits rendered from the fonts matplotlib ships, split by font.

A real image-classification set that needs no download: each image is one
character drawn by FreeType from one of 21 text fonts in matplotlib's wheel
(DejaVu Sans, Sans Mono and Serif, STIX General, each in four styles, and
five Computer Modern faces), then varied as print and scans vary: a random
affine transform (rotation up to 12 degrees, scale 0.85-1.1, shear up to
0.2, shift up to 2 pixels), a thinner or thicker stroke (unless
``render(..., vary_stroke=False)``), contrast and Gaussian noise.
Characters keep their size and place relative to the baseline, so 'c' and
'C', 'o' and 'O' differ as in text.

Five fonts are only ever in the test part (:data:`TEST_FONTS`), so the
test accuracy measures how a model does on typefaces it has never seen.
Needs matplotlib (``pip install minidl[plot]``).

The same arguments give the same bits on any machine with the same
matplotlib (its FreeType draws the glyphs); each font's images come from
their own random stream, so they do not change when other fonts are added.
"""

import os

import numpy as np

LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
DIGITS = '0123456789'
CHARACTER_SETS = {'letters': LETTERS, 'digits': DIGITS, 'alphanumeric': DIGITS + LETTERS}

FONTS = (
    'DejaVuSans.ttf', 'DejaVuSans-Bold.ttf', 'DejaVuSans-Oblique.ttf',
    'DejaVuSans-BoldOblique.ttf', 'DejaVuSansMono.ttf', 'DejaVuSansMono-Bold.ttf',
    'DejaVuSansMono-Oblique.ttf', 'DejaVuSansMono-BoldOblique.ttf', 'DejaVuSerif.ttf',
    'DejaVuSerif-Bold.ttf', 'DejaVuSerif-Italic.ttf', 'DejaVuSerif-BoldItalic.ttf',
    'STIXGeneral.ttf', 'STIXGeneralBol.ttf', 'STIXGeneralItalic.ttf', 'STIXGeneralBolIta.ttf',
    'cmr10.ttf', 'cmb10.ttf', 'cmss10.ttf', 'cmti10.ttf', 'cmtt10.ttf',
)
TEST_FONTS = ('DejaVuSans-Bold.ttf', 'DejaVuSansMono-Oblique.ttf',
              'DejaVuSerif-BoldItalic.ttf', 'STIXGeneralBol.ttf', 'cmss10.ttf')
TRAIN_FONTS = tuple(font for font in FONTS if font not in TEST_FONTS)

_CANVAS = 96      # glyphs are drawn on a 96x96 canvas ...
_CAP_HEIGHT = 44  # ... with capitals this tall ...
_BASELINE = 70    # ... standing on this row, then warped down to the image size


def load_data(characters='letters', samples_per_font=20, size=32, seed=0):
    """Images of ``characters``: training fonts in one part, unseen fonts in the other.

    Args:
        characters: 'letters' (A-Z then a-z, 52 classes), 'digits' (10),
            'alphanumeric' (digits then letters, 62) or a string of
            characters; the label of an image is its character's index.
        samples_per_font: Images of each character in each font.
        size: Height and width of the images.
        seed: Seed of the random variations.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images of shape
        (n, size, size), ink bright on a dark ground (0-255, as MNIST), and
        uint8 labels (int64 beyond 256 characters); the training part holds
        the :data:`TRAIN_FONTS`, the test part the :data:`TEST_FONTS`, each
        ordered by font, then sample, then character.
    """
    characters = CHARACTER_SETS.get(characters, characters)
    if not isinstance(characters, str) or not characters \
            or len(set(characters)) != len(characters):
        raise ValueError(f'characters must be one of {sorted(CHARACTER_SETS)} or a string of '
                         f'distinct characters, got {characters!r}')
    for name, value, low in (('samples_per_font', samples_per_font, 1), ('size', size, 8)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f'{name} must be an integer >= {low}, got {value!r}')
    return (render(characters, TRAIN_FONTS, samples_per_font, size, seed),
            render(characters, TEST_FONTS, samples_per_font, size, seed))


def render(characters, fonts, samples_per_font, size, seed=0, vary_stroke=True):
    """``(images, labels)`` for every font, sample and character, in that order.

    Args:
        characters: The characters (label = index).
        fonts: File names from :data:`FONTS`.
        samples_per_font: Images of each character in each font.
        size: Height and width of the images.
        seed: Seed of the variations; font ``f`` draws from ``(seed, FONTS.index(f))``.
        vary_stroke: Whether strokes get thinner or thicker at random. False
            keeps each font's own weight, so that a bold font's images are the
            bolder ones (the other variations stay the same bits).
    """
    unknown = [font for font in fonts if font not in FONTS]
    if unknown:
        raise ValueError(f'unknown font(s) {unknown}; the fonts are {FONTS}')
    images = np.empty((len(fonts) * samples_per_font * len(characters), size, size), np.uint8)
    index = 0
    for font in fonts:
        canvases = _draw(font, characters)
        rng = np.random.default_rng([seed, FONTS.index(font)])
        for _ in range(samples_per_font):
            for canvas in canvases:
                images[index] = _vary(canvas, size, rng, vary_stroke)
                index += 1
    dtype = np.uint8 if len(characters) <= 256 else np.int64
    labels = np.tile(np.arange(len(characters), dtype=dtype), len(fonts) * samples_per_font)
    return images, labels


def _font_path(font):
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError('the glyphs data set renders the fonts of matplotlib: '
                          'pip install minidl[plot] (or pip install matplotlib)') from error
    return os.path.join(matplotlib.get_data_path(), 'fonts', 'ttf', font)


def _draw(font, characters):
    """Each character of ``font`` on a float canvas, 0 (ground) to 1 (ink)."""
    path = _font_path(font)  # first: it says how to install matplotlib when it is missing
    from matplotlib.ft2font import FT2Font
    face = FT2Font(path)
    face.set_size(_CAP_HEIGHT, 72)
    face.set_text('H')
    face.draw_glyphs_to_bitmap(antialiased=True)
    scale = _CAP_HEIGHT / np.asarray(face.get_image()).shape[0]
    face.set_size(_CAP_HEIGHT * scale, 72)
    canvases = []
    for character in characters:
        face.set_text(character)
        face.draw_glyphs_to_bitmap(antialiased=True)
        bitmap = np.asarray(face.get_image(), np.float32)[:_CANVAS, :_CANVAS] / 255
        height, width = bitmap.shape
        top = _BASELINE - height + face.get_descent() // 64
        top = min(max(top, 0), _CANVAS - height)
        left = (_CANVAS - width) // 2
        canvas = np.zeros((_CANVAS, _CANVAS), np.float32)
        canvas[top:top + height, left:left + width] = bitmap
        canvases.append(canvas)
    return canvases


def _vary(canvas, size, rng, vary_stroke=True):
    """One varied ``size`` x ``size`` uint8 image of a glyph canvas."""
    stroke = rng.integers(-1, 3)  # thinner, as drawn, thicker, much thicker
    for _ in range(abs(stroke) if vary_stroke else 0):  # drawn either way: same other draws
        canvas = _dilate(canvas) if stroke > 0 else -_dilate(-canvas)
    angle = np.deg2rad(rng.uniform(-12, 12))
    scale = rng.uniform(0.85, 1.1) * size / (_CANVAS * 0.8)
    shear = rng.uniform(-0.2, 0.2)
    shift = rng.uniform(-2, 2, size=2)
    # Output pixel -> canvas point: the inverse of scale . rotation . shear about the centres.
    cos, sin = np.cos(angle), np.sin(angle)
    forward = scale * np.array([[cos, -sin], [sin, cos]]) @ np.array([[1, shear], [0, 1]])
    inverse = np.linalg.inv(forward)
    fine = 2 * size  # sample at twice the resolution, then average 2x2: less aliasing
    grid = (np.arange(fine) + 0.5) / 2 - size / 2
    rows, cols = np.meshgrid(grid - shift[0], grid - shift[1], indexing='ij')
    points = inverse @ np.stack([rows.ravel(), cols.ravel()]) + (_CANVAS / 2 - 0.5)
    ink = _bilinear(canvas, points[0], points[1]).reshape(size, 2, size, 2).mean(axis=(1, 3))
    contrast = rng.uniform(0.6, 1.0)
    noisy = ink * contrast + rng.normal(0, rng.uniform(0, 0.08), ink.shape)
    return np.clip(np.rint(noisy * 255), 0, 255).astype(np.uint8)


def _dilate(canvas):
    """Maximum over each pixel's 3x3 neighbourhood (the stroke grows by a pixel)."""
    padded = np.pad(canvas, 1, constant_values=canvas.min())
    rows = np.maximum(np.maximum(padded[:-2], padded[1:-1]), padded[2:])
    return np.maximum(np.maximum(rows[:, :-2], rows[:, 1:-1]), rows[:, 2:])


def _bilinear(canvas, rows, cols):
    """``canvas`` interpolated at fractional points; 0 outside."""
    padded = np.pad(canvas, 1)
    rows, cols = np.clip(rows + 1, 0, _CANVAS), np.clip(cols + 1, 0, _CANVAS)
    top, left = np.floor(rows).astype(int), np.floor(cols).astype(int)
    top, left = np.minimum(top, _CANVAS), np.minimum(left, _CANVAS)
    down, right = rows - top, cols - left
    return (padded[top, left] * (1 - down) * (1 - right)
            + padded[top + 1, left] * down * (1 - right)
            + padded[top, left + 1] * (1 - down) * right
            + padded[top + 1, left + 1] * down * right)
