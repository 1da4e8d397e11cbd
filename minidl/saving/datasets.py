"""Weight datasets judged by what they declare, before any is read.

A file of a few KB can declare a dataset of 149 GiB (chunked storage with no
chunk written reads back as its fill value), so loading compares every
dataset's declared shape and dtype, which h5py gives without reading, with
what the model expects, and reads only once all of them fit. Only real
numbers (floats and integers) are weights; datasets whose values live in
other files (external or virtual storage) are refused, as reading them would
read files the model file points to.
"""

import h5py
import numpy as np


def dataset(group, name):
    """The dataset ``name`` of ``group``, checked to be stored in this file (nothing read).

    Raises:
        KeyError: If there is no such entry.
        TypeError: If the entry is not a dataset.
        ValueError: If its values are stored outside the file.
    """
    if name not in group:
        raise KeyError(f'group {group.name!r} lists weight {name!r}, which is missing')
    item = group[name]
    if not isinstance(item, h5py.Dataset):
        raise TypeError(f'{item.name!r} should be a dataset of numbers, found a '
                        f'{type(item).__name__}')
    if item.is_virtual or item.external:
        raise ValueError(f'dataset {item.name!r} keeps its values in other files (external '
                         f'or virtual storage); minidl reads weights only from the file itself')
    return item


def value_problem(item):
    """Why dataset ``item``'s values cannot be weights (not real numbers), or None."""
    if item.shape is None:
        return f'dataset {item.name!r} is empty (it has no dataspace)'
    kind = item.dtype.kind
    if kind in 'fiu' and item.dtype.fields is None:
        return None
    if h5py.check_string_dtype(item.dtype) is not None or kind in 'SUO':
        described = 'strings'
    elif item.dtype.fields is not None or kind == 'V':
        described = 'compound records'
    else:
        described = f'{item.dtype} values'
    return f'dataset {item.name!r} holds {described}, not real numbers (floats or integers)'


def shape_problem(item, shape, weight_name):
    """Why dataset ``item`` cannot be the weight ``weight_name`` of ``shape``, or None."""
    problem = value_problem(item)
    if problem is None and tuple(item.shape) != tuple(shape):
        problem = (f'weight {weight_name} has shape {tuple(shape)}, the dataset '
                   f'{item.name!r} has shape {tuple(item.shape)}')
    return problem


def read(item, dtype=None):
    """The values of a checked dataset as a numpy array (of ``dtype`` if given)."""
    return np.asarray(item[()], dtype=dtype)
