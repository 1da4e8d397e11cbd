"""Keras 2's update operations: assignments to variables that run when a step runs.

In Keras 2 (TensorFlow 1 graphs) ``K.update(x, new_x)`` builds an assign
operation that changes nothing until a function runs it: the training
function runs the optimizer's updates and the model's (``model.updates``,
from ``add_update``), ``K.function(..., updates=...)`` runs the ones it was
given. minidl computes eagerly, so an :class:`Update` holds the variable,
what to do (assign, add, subtract) and an operand that is either already
computed (a Tensor, when it was made from Tensors) or a symbolic tensor
computed when a function runs it.

Running a list (:func:`run_updates`, :func:`apply_updates`) first takes
every operand's value and only then assigns, in order: each new value is
computed from the values the variables had before the step, whatever the
list's order, which is the result Keras's own optimizers rely on (``p + v``
with the velocity ``v`` computed from the old moment).
"""

import numpy as np

from minidl.compute import to_numpy
from minidl.layers.nest import flatten
from minidl.layers.symbolic import SymbolicTensor
from minidl.tensor import Tensor

_KINDS = ('assign', 'add', 'sub')


class Update:
    """A deferred change of a variable: ``x = operand``, ``x += operand`` or ``x -= operand``.

    Args:
        variable: The Tensor changed in place (its data array stays the same object).
        kind: 'assign', 'add' or 'sub'.
        operand: A Tensor, array or number (its value now: a Tensor is detached,
            as an update is no part of what is differentiated), or a symbolic
            tensor computed when the update runs in a function.

    Raises:
        TypeError: If ``variable`` is not a Tensor (a symbolic tensor has no
            storage to assign to).
    """

    def __init__(self, variable, kind, operand):
        if not isinstance(variable, Tensor):
            raise TypeError(f'an update changes a variable (a Tensor from K.variable or a '
                            f'layer weight), got {variable!r}')
        if kind not in _KINDS:
            raise ValueError(f'update kind must be one of {_KINDS}, got {kind!r}')
        self.variable, self.kind = variable, kind
        self.operand = Tensor.wrap(operand.data) if isinstance(operand, Tensor) else operand

    @property
    def symbolic(self):
        """Whether the operand is computed only when a function runs the update."""
        return isinstance(self.operand, SymbolicTensor)

    def apply(self, value):
        """Change the variable in place with ``value``, the operand's value."""
        data = self.variable.data
        xp = self.variable.xp
        value = value.data if isinstance(value, Tensor) else value
        if not np.isscalar(value):
            value = xp.asarray(to_numpy(value) if xp is np else value)
            if value.shape != data.shape and np.broadcast_shapes(value.shape, data.shape) \
                    != data.shape:
                raise ValueError(f'update of {_name(self.variable)} (shape {data.shape}) with a '
                                 f'value of shape {value.shape}')
        if self.kind == 'assign':
            data[...] = value
        elif self.kind == 'add':
            xp.add(data, value, out=data, casting='unsafe')
        else:
            xp.subtract(data, value, out=data, casting='unsafe')

    def __repr__(self):
        return f'<Update {self.kind} {_name(self.variable)}>'


def as_update(update):
    """``update`` as an :class:`Update`: Keras's ``(variable, new_value)`` pairs are assignments.

    Raises:
        TypeError: For anything else.
    """
    if isinstance(update, Update):
        return update
    if isinstance(update, (list, tuple)) and len(update) == 2 and isinstance(update[0], Tensor):
        return Update(update[0], 'assign', update[1])
    raise TypeError(f'an update must be made by K.update, K.update_add, K.update_sub or '
                    f'K.moving_average_update, or be a pair (variable, new value); got {update!r}')


def operands(updates):
    """The operands of ``updates`` (Updates), to compute together with a function's outputs."""
    return [update.operand for update in updates]


def apply_updates(updates, values):
    """Apply each Update with its operand's computed value, in order.

    A value that shares memory with a variable of the list (``K.update(a, b)``
    next to ``K.update(b, a)``) is copied first, so that every assignment sees
    the values from before the list ran.
    """
    changed = {id(_root(update.variable.data)) for update in updates}
    values = [value.data if isinstance(value, Tensor) else value for value in values]
    values = [value.copy() if id(_root(value)) in changed else value for value in values]
    for update, value in zip(updates, values):
        update.apply(value)


def run_updates(updates):
    """Apply Updates whose operands are all computed (a training step's).

    Raises:
        ValueError: If an operand is symbolic: it needs values fed to the
            graph's inputs, which only ``K.function`` has.
    """
    updates = [as_update(update) for update in flatten(updates) if update is not None]
    for update in updates:
        if update.symbolic:
            raise ValueError(f'{update!r} has a symbolic operand, computed from a graph\'s '
                             f'inputs: run it with K.function(inputs, outputs, updates=[...]); '
                             f'inside a layer\'s call, compute it from the Tensors call receives')
    apply_updates(updates, operands(updates))


def _root(array):
    while getattr(array, 'base', None) is not None:
        array = array.base
    return array


def _name(variable):
    return getattr(variable, 'name', None) or f'a variable of shape {variable.shape}'
