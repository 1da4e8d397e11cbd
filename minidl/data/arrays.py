"""Index arithmetic behind ``fit``'s array input.

- :func:`split_validation` when ``validation_split`` is given: Keras takes
  the *last* fraction of the samples, before any shuffling;
- :func:`batch_indices` at the start of each epoch: which samples make up
  each batch, drawn from an explicit generator so that an epoch's order is
  repeatable and its state can be checkpointed;
- :func:`take` cuts samples out of nested lists of arrays.

(The data arguments themselves, NaN and infinity included, are checked by
the plain functions of :mod:`minidl.models.intake`.)

"Arrays" are numpy or CuPy arrays, or Tensors; nothing here copies data
that does not have to be copied.
"""

import math
import numbers

import numpy as np



def split_validation(arrays, fraction):
    """Split each array into its first ``1 - fraction`` and its last ``fraction``.

    As Keras, the validation samples come from the end of the data, before
    any shuffling: shuffle the data yourself if its order is meaningful.

    Args:
        arrays: A nested list of arrays of one length (None entries stay None),
            for instance ``[x, y, sample_weight]``.
        fraction: The validation fraction, strictly between 0 and 1.

    Returns:
        ``(train, validation)``, each with the structure of ``arrays``.

    Raises:
        ValueError: If ``fraction`` is not in (0, 1) or leaves a part empty.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) \
            or not 0 < fraction < 1:
        raise ValueError(f'validation_split must be a number between 0 and 1, got {fraction!r}')
    first = _first(arrays)
    if first is None:
        raise ValueError('validation_split needs at least one array to split')
    count = len(first)
    cut = int(math.floor(count * (1 - fraction)))
    if cut == 0 or cut == count:
        raise ValueError(f'validation_split={fraction} of {count} samples leaves the '
                         f'{"training" if cut == 0 else "validation"} part empty')
    return take(arrays, slice(0, cut)), take(arrays, slice(cut, count))


def batch_indices(count, batch_size, shuffle, generator):
    """The samples of each batch of one epoch over ``count`` samples.

    Args:
        count: Number of samples.
        batch_size: Samples per batch; the last batch may be smaller.
        shuffle: False (in order), True (one permutation of all samples per
            epoch) or 'batch' (the order of the full batches is permuted,
            each batch a contiguous range and the partial batch last: Keras's
            mode for data that is read in chunks, such as HDF5).
        generator: The :class:`minidl.Generator` that shuffling draws from
            (one permutation per call).

    Returns:
        A list with one entry per batch: an int64 index array when
        ``shuffle=True``, else a slice (so that a batch is a view, not a copy).

    Raises:
        ValueError: If ``batch_size`` is not a positive integer or ``shuffle``
            is not a bool or 'batch'.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
            or batch_size < 1:
        raise ValueError(f'batch_size must be a positive integer, got {batch_size!r}')
    by_batch = isinstance(shuffle, str) and shuffle == 'batch'
    if not (by_batch or isinstance(shuffle, (bool, np.bool_))):
        raise ValueError(f"shuffle must be True, False or 'batch', got {shuffle!r}")
    starts = range(0, count, batch_size)
    if shuffle and not by_batch:
        order = np.asarray(generator.permutation(count))
        return [order[start:start + batch_size] for start in starts]
    batches = [slice(start, min(start + batch_size, count)) for start in starts]
    if by_batch:
        full = count // batch_size
        batches = [batches[int(i)] for i in np.asarray(generator.permutation(full))] \
            + batches[full:]
    return batches


def take(arrays, indices):
    """The samples ``indices`` (an index array or a slice) of every array in ``arrays``.

    ``arrays`` is an array or a nested list of arrays; None entries stay None.
    """
    if isinstance(arrays, list):
        return [take(item, indices) for item in arrays]
    return None if arrays is None else arrays[indices]


def _first(arrays):
    """The first array in the nested list ``arrays``, or None."""
    if not isinstance(arrays, list):
        return arrays
    for item in arrays:
        found = _first(item)
        if found is not None:
            return found
    return None
