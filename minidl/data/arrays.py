"""Arrays in, batches out: the checks and index arithmetic behind ``fit``'s array input.

The training loop calls, in order:

1. :func:`check_arrays` once per call of fit/evaluate/predict: ``x``, ``y``
   and ``sample_weight`` become lists of arrays of one length, or a clear
   error says which lengths differ;
2. :func:`split_validation` when ``validation_split`` is given: Keras takes
   the *last* fraction of the samples, before any shuffling;
3. :func:`batch_indices` at the start of each epoch: which samples make up
   each batch, drawn from an explicit generator so that an epoch's order is
   repeatable and its state can be checkpointed;
4. :func:`take` to cut one batch out of the arrays.

"Arrays" are numpy or CuPy arrays, or Tensors; nothing here copies data
that does not have to be copied.
"""

import math
import numbers

import numpy as np

from minidl.backend import get_array_module, is_array
from minidl.tensor import Tensor


def check_arrays(x, y=None, sample_weight=None):
    """Normalise the data arguments of fit/evaluate/predict.

    Args:
        x: An array (one model input) or a list/tuple of arrays (several
            inputs). A dict of named inputs must be put in the model's input
            order by the caller first.
        y: None, an array or a list/tuple of arrays (one per output).
        sample_weight: None or an array with one weight per sample (or per
            sample and time step).

    Returns:
        ``(x, y, sample_weight)``: x and y as lists of arrays (y None if not
        given). Array-likes such as nested lists become numpy arrays;
        arrays and Tensors are kept as they are.

    Raises:
        TypeError: If ``x`` or ``y`` is a dict.
        ValueError: If an array has no sample dimension, the arrays' first
            dimensions differ, or floating data contains NaN or infinity.
    """
    x = _as_list(x, 'x')
    y = None if y is None else _as_list(y, 'y')
    if sample_weight is not None:
        sample_weight = _as_array(sample_weight, 'sample_weight')
    named = [(f'x[{i}]', a) for i, a in enumerate(x)]
    named += [(f'y[{i}]', a) for i, a in enumerate(y or [])]
    named += [] if sample_weight is None else [('sample_weight', sample_weight)]
    lengths = {name: int(array.shape[0]) for name, array in named}
    if len(set(lengths.values())) > 1:
        sizes = ', '.join(f'{name}: {length}' for name, length in lengths.items())
        raise ValueError(f'data cardinality is ambiguous: the arrays hold different numbers '
                         f'of samples ({sizes}); give every array the same first dimension')
    for name, array in named:
        _check_finite(name, array)
    return x, y, sample_weight


def _as_list(data, name):
    if isinstance(data, dict):
        raise TypeError(f'{name} is a dict; pass its arrays as a list in the order of the '
                        f"model's {'inputs' if name == 'x' else 'outputs'}")
    # As tf.keras, a list of numbers (or of lists of numbers) is one array, not many.
    several = isinstance(data, (list, tuple)) and not _is_nested_numbers(data)
    items = list(data) if several else [data]
    if not items:
        raise ValueError(f'{name} is an empty list; give at least one array')
    if len(items) == 1:
        return [_as_array(items[0], name)]
    return [_as_array(item, f'{name}[{i}]') for i, item in enumerate(items)]


def _is_nested_numbers(data):
    if isinstance(data, (list, tuple)):
        return bool(data) and all(_is_nested_numbers(item) for item in data)
    return isinstance(data, (numbers.Number, np.generic))


def _as_array(data, name):
    if not (isinstance(data, Tensor) or is_array(data)):
        data = np.asarray(data)
    if data.ndim == 0:
        raise ValueError(f'{name} must have a first (sample) dimension; got a scalar')
    return data


def _check_finite(name, array):
    data = array.data if isinstance(array, Tensor) else array
    if data.dtype.kind not in 'fc':
        return
    finite = get_array_module(data).isfinite(data)
    if not finite.all():
        sample = int(np.argmin(finite.reshape(len(data), -1).all(axis=1).tolist()))
        raise ValueError(f'{name} contains NaN or infinity (first in sample {sample})')


def split_validation(arrays, fraction):
    """Split each array into its first ``1 - fraction`` and its last ``fraction``.

    As Keras, the validation samples come from the end of the data, before
    any shuffling: shuffle the data yourself if its order is meaningful.

    Args:
        arrays: A nested list of arrays of one length (None entries stay None),
            for instance ``[x, y, sample_weight]`` from :func:`check_arrays`.
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
