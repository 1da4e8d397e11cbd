"""Glyphs: rendered characters, split by font, seeded, with labels that match the images."""

import numpy as np
import pytest

pytest.importorskip('matplotlib')

from minidl.datasets import glyphs  # noqa: E402


@pytest.fixture(scope='module')
def digits():
    return glyphs.load_data('digits', samples_per_font=3)


def test_layout_and_split_by_font(digits):
    (x_train, y_train), (x_test, y_test) = digits
    assert x_train.shape == (16 * 3 * 10, 32, 32) and x_test.shape == (5 * 3 * 10, 32, 32)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.uint8
    # Ordered by font, then sample, then character.
    np.testing.assert_array_equal(y_train[:20], np.tile(np.arange(10), 2))
    assert set(glyphs.TRAIN_FONTS).isdisjoint(glyphs.TEST_FONTS)
    assert sorted(glyphs.TRAIN_FONTS + glyphs.TEST_FONTS) == sorted(glyphs.FONTS)
    # Ink on a dark ground: the border is darker than the centre on average.
    assert x_train[:, :4].mean() < x_train[:, 12:20, 12:20].mean()


def test_same_seed_same_bits_and_fonts_drawn_independently(digits):
    (x_train, _), (x_test, _) = digits
    (again, _), _ = glyphs.load_data('digits', samples_per_font=3)
    np.testing.assert_array_equal(again, x_train)
    (other_seed, _), _ = glyphs.load_data('digits', samples_per_font=3, seed=1)
    assert not np.array_equal(other_seed, x_train)
    # A font's images do not depend on which other fonts are drawn.
    alone, labels = glyphs.render(glyphs.DIGITS, glyphs.TEST_FONTS[2:3], 3, 32)
    np.testing.assert_array_equal(alone, x_test[2 * 30:3 * 30])
    np.testing.assert_array_equal(labels, np.tile(np.arange(10, dtype=np.uint8), 3))


def test_labels_name_the_characters_drawn(digits):
    """A nearest-centroid classifier fitted on the training fonts recognises unseen fonts
    far above chance (0.1), which it could not if labels and images were out of step."""
    (x_train, y_train), (x_test, y_test) = digits
    features = lambda x: x.reshape(len(x), -1).astype(np.float64) / 255  # noqa: E731
    centroids = np.stack([features(x_train[y_train == k]).mean(axis=0) for k in range(10)])
    distances = ((features(x_test)[:, None] - centroids[None]) ** 2).sum(axis=-1)
    assert (distances.argmin(axis=1) == y_test).mean() > 0.5


def test_character_sets_and_sizes():
    (x, y), _ = glyphs.load_data('AbC', samples_per_font=1, size=16)
    assert x.shape == (16 * 3, 16, 16)
    np.testing.assert_array_equal(y[:3], [0, 1, 2])
    assert len(glyphs.CHARACTER_SETS['letters']) == 52
    assert glyphs.CHARACTER_SETS['alphanumeric'].startswith('0123456789A')


@pytest.mark.parametrize('kwargs, message', [
    ({'characters': 'AA'}, 'distinct'),
    ({'characters': ''}, 'characters'),
    ({'characters': 'greek'}, 'distinct'),
    ({'samples_per_font': 0}, 'samples_per_font'),
    ({'size': 4}, 'size'),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        glyphs.load_data(**kwargs)


def test_unknown_font_is_refused():
    with pytest.raises(ValueError, match='unknown font'):
        glyphs.render('A', ['Comic.ttf'], 1, 32)


def test_without_stroke_variation_bold_fonts_draw_the_thicker_strokes():
    """vary_stroke=False keeps the fonts' own weights (lesson 3 learns 'bold' from them);
    with the random strokes a regular font's thickened image often outweighs a bold one's.
    Stroke area: the pixels above half of the image's brightest (contrast varies)."""
    def stroke_area(font, vary):
        images, _ = glyphs.render(glyphs.DIGITS, [font], 8, 32, vary_stroke=vary)
        images = images.reshape(len(images), -1).astype(np.float64)
        return (images > 0.5 * images.max(axis=1, keepdims=True)).sum(axis=1)

    for regular, bold in (('DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'),
                          ('DejaVuSerif.ttf', 'DejaVuSerif-Bold.ttf')):
        # The same digit, sample by sample (measured: 100 % and 96 % of pairs as drawn,
        # 79 % and 64 % with the random strokes).
        as_drawn = (stroke_area(bold, False) > stroke_area(regular, False)).mean()
        varied = (stroke_area(bold, True) > stroke_area(regular, True)).mean()
        assert as_drawn >= 0.95 and varied < 0.85
    # Only the strokes change: the samples whose random stroke was 'as drawn' are the
    # same bits either way, the others differ.
    as_drawn, _ = glyphs.render('1', ['cmr10.ttf'], 12, 32, vary_stroke=False)
    varied, _ = glyphs.render('1', ['cmr10.ttf'], 12, 32)
    same = [np.array_equal(a, b) for a, b in zip(as_drawn, varied)]
    assert 0 < sum(same) < len(same)
