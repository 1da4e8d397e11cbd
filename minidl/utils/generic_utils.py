"""``keras.utils.generic_utils``: custom objects found by name, Keras 2's ``Progbar``, and the
small list helpers scripts import from it (``to_list``, ``unpack_singleton``, ``slice_arrays``)."""

import inspect

from minidl.registry import CustomObjectScope, custom_object_scope, get_custom_objects
from minidl.utils.progbar import Progbar

__all__ = ['CustomObjectScope', 'Progbar', 'custom_object_scope', 'get_custom_objects',
           'has_arg', 'object_list_uid', 'slice_arrays', 'to_list', 'unpack_singleton']


def to_list(x, allow_tuple=False):
    """``x`` as a list: a list as it is, anything else wrapped in one.

    Args:
        x: Any object.
        allow_tuple: Whether a tuple becomes the list of its items (True)
            or one item (False, Keras 2's default, as a tuple may be a shape).

    Returns:
        A list (``x`` itself when it is one).
    """
    if isinstance(x, list):
        return x
    if allow_tuple and isinstance(x, tuple):
        return list(x)
    return [x]


def unpack_singleton(x):
    """The only item of a one-item list or tuple, else ``x`` unchanged."""
    if len(x) == 1:
        return x[0]
    return x


def slice_arrays(arrays, start=None, stop=None):
    """Rows ``start:stop``, or the rows listed in ``start``, of an array or of each array of a list.

    Args:
        arrays: An array-like, a list of array-likes (None items stay None),
            or None.
        start: A first row (an int or None), or a list or array of row
            indices (then ``stop`` is ignored).
        stop: The row after the last one, with an int or None ``start``.

    Returns:
        For a list, a list of the slices; for one array, its slice; for
        None, ``[None]`` (Keras 2's convention). Where Keras 2.2.4 returns
        ``[None]`` for one array and an int or None ``start`` (a bug: it
        tests ``start`` for ``__getitem__``), this returns the slice.
    """
    if arrays is None:
        return [None]
    if hasattr(start, '__len__'):
        # h5py datasets take lists, not arrays, as fancy indices (as in Keras 2).
        rows = start.tolist() if hasattr(start, 'shape') else start
        if isinstance(arrays, list):
            return [None if x is None else x[rows] for x in arrays]
        return arrays[rows]
    if isinstance(arrays, list):
        return [None if x is None else x[start:stop] for x in arrays]
    return arrays[start:stop]


def has_arg(fn, name, accept_all=False):
    """Whether the callable ``fn`` takes an argument ``name`` by keyword.

    Third-party layers ask it of a wrapped layer's ``call`` (``has_arg(layer.call,
    'training')``).

    Args:
        fn: A callable.
        name: The argument's name.
        accept_all: Also answer True when ``fn`` takes ``**kwargs``.
    """
    parameters = inspect.signature(fn).parameters
    if accept_all and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return True
    parameter = parameters.get(name)
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def object_list_uid(object_list):
    """A string naming the objects of ``object_list`` (or one object) by their ids, in order,
    as Keras 2 keys its per-input caches."""
    return ', '.join(str(abs(id(item))) for item in to_list(object_list))
