"""The 8x8 handwritten digits of scikit-learn: a small MNIST that needs no download.

1797 grey-scale images of the digits 0-9 (the UCI "optical recognition of
handwritten digits" test set), bundled with scikit-learn, which is an
optional dependency: ``pip install minidl[data]``.
"""

import numbers

import numpy as np

from minidl.compute import Generator


def load_data(test_split=0.2, seed=0):
    """The digits, shuffled and split into a training and a test part.

    The images are uint8 arrays of shape (n, 8, 8) whose values are the
    data set's grey levels, 0 to 16 (divide by 16 for [0, 1]), as MNIST's
    loader gives uint8 values 0 to 255; the labels are uint8 of shape (n,).

    Args:
        test_split: Fraction of the samples in the test part, in [0, 1).
        seed: Seed of the shuffle that precedes the split: the same seed
            always gives the same split.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``.

    Raises:
        ImportError: If scikit-learn is not installed.
        ValueError: If ``test_split`` is not in [0, 1).
    """
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) \
            or not 0 <= test_split < 1:
        raise ValueError(f'test_split must be a number in [0, 1), got {test_split!r}')
    try:
        from sklearn.datasets import load_digits
    except ImportError as error:
        raise ImportError('the digits data set comes with scikit-learn: '
                          'pip install minidl[data] (or pip install scikit-learn)') from error
    digits = load_digits()
    images = digits.images.astype(np.uint8)
    labels = digits.target.astype(np.uint8)
    order = np.asarray(Generator(seed).permutation(len(images)))
    images, labels = images[order], labels[order]
    cut = int(len(images) * (1 - test_split))
    return (images[:cut], labels[:cut]), (images[cut:], labels[cut:])
