"""Nested structures of tensors: a tensor, or lists, tuples and dicts of them.

Layers and models take and return such structures (``Add()([a, b])``,
``LSTM(return_state=True)`` returns ``[output, h, c]``); these helpers walk
them in one fixed order.
"""


def flatten(structure):
    """The leaves of ``structure`` in order (dicts by sorted key)."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    return [structure]


def map_structure(function, structure):
    """``structure`` with every leaf replaced by ``function(leaf)``."""
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_structure(function, item) for item in structure)
    if isinstance(structure, dict):
        return {key: map_structure(function, value) for key, value in structure.items()}
    return function(structure)


def unpack_single(items):
    """``items[0]`` if there is exactly one item, else the list itself (Keras's convention)."""
    return items[0] if isinstance(items, (list, tuple)) and len(items) == 1 else items
