"""Choices and loops over tensors: switch, map_fn, foldl, foldr."""

import minidl.functions as F
from minidl.backend.convert import as_tensor, wrap
from minidl.layers.operation import has_symbolic, recordable


def switch(condition, then_expression, else_expression):
    """``then_expression`` where ``condition`` holds, else ``else_expression``.

    Args:
        condition: A scalar (Python or 0-d tensor) chooses one whole
            expression; a tensor chooses elementwise, its shape extended
            with trailing axes of size 1 to broadcast against the expressions.
        then_expression: A tensor, or a callable returning one.
        else_expression: A tensor, or a callable returning one.
    """
    scalar = not has_symbolic([condition], {}) and getattr(condition, 'ndim', 0) == 0
    if scalar:
        chosen = then_expression if bool(condition) else else_expression
        return chosen() if callable(chosen) else chosen
    if callable(then_expression):
        then_expression = then_expression()
    if callable(else_expression):
        else_expression = else_expression()
    return select(condition, then_expression, else_expression)


@recordable
def select(condition, then_expression, else_expression):
    """Elementwise choice; ``condition`` gains trailing axes of size 1 up to the expressions'
    rank."""
    condition = as_tensor(condition)
    if condition.ndim == 0:
        return then_expression if bool(condition) else else_expression
    rank = max(getattr(then_expression, 'ndim', 0), getattr(else_expression, 'ndim', 0))
    if condition.ndim > rank:
        raise ValueError(f'switch: the condition has {condition.ndim} dimensions, more than '
                         f'the expressions ({rank})')
    mask = condition.data.astype(bool).reshape(condition.shape + (1,) * (rank - condition.ndim))
    return F.where(wrap(mask), then_expression, else_expression)


@recordable
def map_fn(fn, elems, name=None, dtype=None):
    """``fn`` applied to each ``elems[i]`` along the first axis, the results stacked."""
    elems = as_tensor(elems)
    return F.stack([as_tensor(fn(elems[i])) for i in range(elems.shape[0])], axis=0)


@recordable
def foldl(fn, elems, initializer=None, name=None):
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[-1])``.

    Without ``initializer`` the fold starts from ``elems[0]``.
    """
    elems = as_tensor(elems)
    items = [elems[i] for i in range(elems.shape[0])]
    return _fold(fn, items, initializer)


@recordable
def foldr(fn, elems, initializer=None, name=None):
    """:func:`foldl` from the last element to the first."""
    elems = as_tensor(elems)
    items = [elems[i] for i in reversed(range(elems.shape[0]))]
    return _fold(fn, items, initializer)


def _fold(fn, items, initializer):
    if initializer is None:
        accumulator, items = items[0], items[1:]
    else:
        accumulator = initializer
    for item in items:
        accumulator = fn(accumulator, item)
    return accumulator
