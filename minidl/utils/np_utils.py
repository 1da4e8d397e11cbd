"""Array helpers for preparing data: one-hot labels and norm scaling."""

import numpy as np

from minidl.backend import get_array_module, to_numpy


def to_categorical(y, num_classes=None, dtype='float32'):
    """Convert integer class labels to one-hot rows.

    Args:
        y: Integer labels of any shape (array-like). A trailing axis of size 1,
            as in labels of shape (n, 1), is dropped, so (n, 1) gives
            (n, num_classes).
        num_classes: Number of classes; None takes ``max(y) + 1``.
        dtype: Dtype of the result.

    Returns:
        A numpy array of shape ``y.shape + (num_classes,)`` (after dropping a
        trailing axis of size 1) holding 1 at each label's index and 0 elsewhere.

    Raises:
        ValueError: For non-integer, negative or too large labels, or a bad
            ``num_classes``.
    """
    labels = to_numpy(y)
    if labels.dtype.kind == 'f' and not np.all(labels == np.floor(labels)):
        bad = labels[labels != np.floor(labels)].flat[0]
        raise ValueError(f'to_categorical: labels must be integers, got {bad!r}')
    if labels.dtype.kind not in 'iufb':
        raise ValueError(f'to_categorical: labels must be integers, got dtype {labels.dtype}')
    labels = labels.astype(np.int64)
    shape = labels.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    labels = labels.ravel()
    if labels.size and labels.min() < 0:
        raise ValueError(f'to_categorical: labels must be non-negative, got {labels.min()}')
    if num_classes is None:
        if not labels.size:
            raise ValueError('to_categorical: num_classes is required when y is empty')
        num_classes = int(labels.max()) + 1
    elif not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool) or num_classes < 1:
        raise ValueError(f'to_categorical: num_classes must be a positive integer, got {num_classes!r}')
    if labels.size and labels.max() >= num_classes:
        raise ValueError(f'to_categorical: label {labels.max()} is out of range for '
                         f'num_classes={num_classes} (labels must be < num_classes)')
    one_hot = np.zeros((labels.size, int(num_classes)), dtype=dtype)
    one_hot[np.arange(labels.size), labels] = 1
    return one_hot.reshape(shape + (int(num_classes),))


def normalize(x, axis=-1, order=2):
    """Scale ``x`` to unit norm along ``axis``.

    Args:
        x: Array (numpy or CuPy) or array-like.
        axis: Axis along which to take the norm.
        order: Norm order, as for ``numpy.linalg.norm`` (2 for Euclidean).

    Returns:
        ``x`` divided by its norms along ``axis``; slices of norm 0 are left
        unchanged (their norm is taken as 1).
    """
    xp = get_array_module(x)
    x = xp.asarray(x)
    norms = xp.atleast_1d(xp.linalg.norm(x, order, axis))
    norms[norms == 0] = 1
    return x / xp.expand_dims(norms, axis)
