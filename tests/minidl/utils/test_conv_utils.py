"""keras.utils.conv_utils's helpers against sizes counted directly and numpy's convolve."""

import numpy as np
import pytest

from minidl.utils import conv_utils


def test_normalize_tuple_and_padding():
    assert conv_utils.normalize_tuple(3, 2, 'kernel_size') == (3, 3)
    assert conv_utils.normalize_tuple([1, np.int64(2)], 2, 'strides') == (1, 2)
    for bad in ((1, 2, 3), 'ab', 1.5, (1, 2.0)):
        with pytest.raises(ValueError, match='The `strides` argument must be a tuple of 2'):
            conv_utils.normalize_tuple(bad, 2, 'strides')
    assert conv_utils.normalize_padding('SAME') == 'same'
    with pytest.raises(ValueError, match='"valid", "same"'):
        conv_utils.normalize_padding('full')
    assert conv_utils.normalize_data_format(None) in ('channels_last', 'channels_first')


@pytest.mark.parametrize('length', [1, 5, 8, 13])
@pytest.mark.parametrize('window', [1, 2, 3])
@pytest.mark.parametrize('stride', [1, 2, 3])
def test_conv_output_length_counts_the_windows(length, window, stride):
    signal, kernel = np.ones(length), np.ones(window)
    # Stride s keeps every s-th position of the stride-1 result, starting at the first.
    for padding, mode in (('valid', 'valid'), ('full', 'full')):
        if mode == 'valid' and length < window:
            continue  # Keras 2's formula, kept here, goes below zero (the layer then fails)
        assert conv_utils.conv_output_length(length, window, padding, stride) == \
            len(np.convolve(signal, kernel, mode)[::stride])
    for padding in ('same', 'causal'):
        assert conv_utils.conv_output_length(length, window, padding, stride) == \
            len(range(0, length, stride))
    # Dilation d spreads the window over d (w - 1) + 1 positions.
    assert conv_utils.conv_output_length(length + 6, window, 'valid', 1, dilation=3) == \
        length + 6 - 3 * (window - 1)
    assert conv_utils.conv_output_length(None, window, 'valid', stride) is None


@pytest.mark.parametrize('padding', ['valid', 'same', 'full'])
def test_conv_input_length_inverts_the_output_length(padding):
    for output in range(1, 9):
        for window in (1, 3, 5):
            length = conv_utils.conv_input_length(output, window, padding, 1)
            assert conv_utils.conv_output_length(length, window, padding, 1) == output
    assert conv_utils.conv_input_length(None, 3, padding, 1) is None


@pytest.mark.parametrize('stride', [1, 2, 3])
@pytest.mark.parametrize('window', [1, 2, 3, 5])
def test_deconv_length_is_the_span_of_the_scattered_windows(stride, window):
    # A transposed convolution writes input i to [i s, i s + w): with 'valid' padding the
    # output reaches the last window's end (and at least L s); output_padding adds to the
    # end of the last window.
    for length in (1, 4, 7):
        span = (length - 1) * stride + window
        assert conv_utils.deconv_length(length, stride, window, 'valid', None) == \
            max(span, length * stride)
        assert conv_utils.deconv_length(length, stride, window, 'valid', 1) == span + 1
        assert conv_utils.deconv_length(length, stride, window, 'same', None) == length * stride
        assert conv_utils.deconv_length(length, stride, window, 'same', 0) == \
            span - 2 * (window // 2)
    assert conv_utils.deconv_length(None, stride, window, 'same', None) is None


def test_convert_kernel_reverses_the_spatial_axes_only():
    kernel = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    converted = conv_utils.convert_kernel(kernel)
    np.testing.assert_array_equal(converted, kernel[::-1, ::-1])
    np.testing.assert_array_equal(conv_utils.convert_kernel(converted), kernel)
    with pytest.raises(ValueError, match='3 to 5 axes'):
        conv_utils.convert_kernel(np.zeros((2, 2)))
