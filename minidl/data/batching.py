"""Splitting arrays into batches and a validation part, deterministically."""

import math

from minidl.backend import to_numpy


def batch_indices(count, batch_size, shuffle, generator):
    """The samples of each batch of an epoch over ``count`` samples.

    Args:
        count: Number of samples.
        batch_size: Samples per batch (the last batch may be smaller).
        shuffle: Draw a permutation from ``generator`` (else in order).
        generator: A :class:`minidl.Generator`.

    Returns:
        A list of int64 index arrays, or of slices when not shuffled (so the
        batches are views of the arrays, not copies).
    """
    if count == 0:
        return []
    if not shuffle:
        return [slice(start, min(start + batch_size, count))
                for start in range(0, count, batch_size)]
    order = to_numpy(generator.permutation(count))
    return [order[start:start + batch_size] for start in range(0, count, batch_size)]


def split_validation(arrays, fraction):
    """Split each array into its first ``1 - fraction`` and its last ``fraction``.

    Keras takes the validation samples from the end, before any shuffling.
    ``arrays`` is a nested list of arrays (None entries stay None).

    Returns:
        ``(train, validation)``, each with the structure of ``arrays``.
    """
    if not 0 < fraction < 1:
        raise ValueError(f'validation_split must be between 0 and 1, got {fraction}')
    count = len(_first(arrays))
    cut = int(math.floor(count * (1 - fraction)))
    if cut == 0 or cut == count:
        raise ValueError(f'validation_split={fraction} of {count} samples leaves one of the '
                         f'two parts empty')
    return _map(lambda a: a[:cut], arrays), _map(lambda a: a[cut:], arrays)


def _first(arrays):
    for item in arrays:
        if isinstance(item, list):
            found = _first(item)
            if found is not None:
                return found
        elif item is not None:
            return item
    return None


def _map(function, arrays):
    return [_map(function, item) if isinstance(item, list)
            else None if item is None else function(item) for item in arrays]
