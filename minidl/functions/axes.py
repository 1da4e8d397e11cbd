"""Axis arguments: one check and normalisation shared by every function."""

import operator


def normalize_axis(axis, shape, name):
    """``axis`` (possibly negative) of an input of ``shape`` as an index in ``[0, ndim)``.

    Raises:
        ValueError: naming the function ``name`` when ``axis`` is not an
            integer in ``[-ndim, ndim)``.
    """
    try:
        index = operator.index(axis)
    except TypeError:
        raise ValueError(f'{name}: axis must be an integer, got {axis!r}') from None
    ndim = len(shape)
    if not -ndim <= index < ndim:
        raise ValueError(f'{name}: axis {axis} is out of range for input of shape {tuple(shape)}')
    return index % ndim


def normalize_axes(axis, shape, name):
    """``axis`` (None for all, an int or a sequence) as a tuple of distinct indices."""
    if axis is None:
        return tuple(range(len(shape)))
    axes = tuple(normalize_axis(a, shape, name)
                 for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f'{name}: repeated axis in {axis!r}')
    return axes
