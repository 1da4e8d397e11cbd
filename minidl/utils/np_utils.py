"""One-hot labels and norm scaling on numpy arrays (Keras's ``np_utils``)."""

import numpy as np

from minidl.compute import to_numpy
from minidl.tensor import Tensor


def to_categorical(y, num_classes=None, dtype='float32'):
    """One-hot encode integer class labels.

    A trailing axis of size 1 is dropped first, so labels of shape (n,) and
    (n, 1) both give (n, num_classes); any other shape ``s`` gives
    ``s + (num_classes,)``.

    Args:
        y: Class labels: whole numbers from 0 to ``num_classes - 1`` (an
            array, a list or a Tensor).
        num_classes: Number of classes; by default the largest label plus 1.
        dtype: dtype of the result.

    Returns:
        A numpy array of zeros and ones.

    Raises:
        ValueError: If a label is negative, not a whole number, or not below
            ``num_classes``, or if there are no labels to infer
            ``num_classes`` from.
    """
    labels = to_numpy(y.data if isinstance(y, Tensor) else y)
    if labels.dtype.kind == 'f' and not np.array_equal(labels, np.floor(labels)):
        raise ValueError('to_categorical: labels must be whole numbers, got fractional values')
    if labels.dtype.kind not in 'biuf':
        raise ValueError(f'to_categorical: labels must be integers, got dtype {labels.dtype}')
    labels = labels.astype(np.int64)
    shape = labels.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    labels = labels.ravel()
    if num_classes is None:
        if labels.size == 0:
            raise ValueError('to_categorical: cannot infer num_classes from no labels')
        num_classes = int(labels.max()) + 1
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(f'to_categorical: labels must lie in [0, {num_classes}); got values '
                         f'from {labels.min()} to {labels.max()}')
    categorical = np.zeros((labels.size, num_classes), dtype=dtype)
    categorical[np.arange(labels.size), labels] = 1
    return categorical.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (slices of norm 0 are left as they are).

    Args:
        x: Numpy array.
        axis: Axis along which norms are taken.
        order: Norm order, as ``numpy.linalg.norm``'s ``ord`` (2: Euclidean).

    Returns:
        A numpy array of the shape of ``x``.
    """
    x = np.asarray(x)
    # keepdims keeps a 1-D input 1-D (Keras 2 returned it as a 1-row matrix).
    norms = np.linalg.norm(x, order, axis, keepdims=True)
    norms[norms == 0] = 1
    return x / norms
