"""Optimizers written the Keras 2 way: ``get_updates(loss, params)`` returning update operations.

Many Keras 2 code bases carry an optimizer like this one::

    class MySGD(Optimizer):
        def __init__(self, lr=0.01, momentum=0.9, **kwargs):
            super().__init__(**kwargs)
            self.iterations = K.variable(0, dtype='int64', name='iterations')
            self.lr = K.variable(lr, name='lr')
            self.momentum = K.variable(momentum, name='momentum')

        def get_updates(self, loss, params):
            grads = self.get_gradients(loss, params)
            moments = [K.zeros(K.int_shape(p)) for p in params]
            self.weights = [self.iterations] + moments
            self.updates = [K.update_add(self.iterations, 1)]
            for p, g, m in zip(params, grads, moments):
                v = self.momentum * m - self.lr * g
                self.updates += [K.update(m, v), K.update(p, p + v)]
            return self.updates

Keras 2 calls ``get_updates`` once, on the graph's symbolic loss, and runs
the operations it returns at every step. minidl computes eagerly: an
expression such as ``self.momentum * m`` is a number as soon as it is
written, so a list built once would repeat the first step's values. Instead
the training step calls ``get_updates`` again at every step, after the
gradients are known, and applies the updates it returns
(:func:`minidl.layers.updates.run_updates`: every new value computed from the
values before the step, then assigned). Two things make this equal to
building the graph once:

- The ``loss`` it gets is a :class:`StepLoss`, whose gradients
  (``self.get_gradients(loss, params)`` or ``K.gradients(loss, params)``)
  are the step's, already computed by backpropagation (and summed over
  processes), not computed again.
- Variables are made once. While ``get_updates`` runs, ``K.variable`` (and
  ``K.zeros``, ``K.ones``, ...) go through :func:`made_once`: the first call
  for a list of parameters makes them; later calls get the same variables
  back, in the order they were made, so the moments persist from step to
  step.

Built-in optimizers never come here: they keep their own in-place update
(``Optimizer.apply_gradients``), bit for bit as before.
"""

import threading

import numpy as np

from minidl.layers.updates import run_updates
from minidl.tensor import Tensor, no_grad


class StepLoss:
    """The ``loss`` a training step gives ``get_updates``: its gradients are the step's.

    Args:
        params: The parameter Tensors of the step.
        grads: One gradient Tensor per parameter (zeros where the loss does not
            reach it, as ``K.gradients`` gives).
    """

    def __init__(self, params, grads):
        self._grads = {id(param): grad for param, grad in zip(params, grads)}

    def gradients(self, variables):
        """The step's gradient of each Tensor of ``variables`` (a list of Tensors).

        Raises:
            ValueError: For a variable the step did not differentiate (not a
                trained parameter of the model).
        """
        variables = list(variables) if isinstance(variables, (list, tuple)) else [variables]
        missing = [v for v in variables if id(v) not in self._grads]
        if missing:
            names = ', '.join(str(getattr(v, 'name', None) or tuple(v.shape)) for v in missing)
            raise ValueError(f'get_updates: the training step has gradients for the model\'s '
                             f'trained weights only, not for {names}')
        return [self._grads[id(v)] for v in variables]

    def __repr__(self):
        return f'<StepLoss of {len(self._grads)} parameters>'


class _Trace:
    """The variables ``get_updates`` made for one list of parameters, in order.

    Attributes:
        params: The parameters (kept, so that their ids stay theirs).
        variables: The variables made by the first call.
        position: How many of them the call in progress has taken again.
        replaying: False during the first call, which makes them.
    """

    def __init__(self, params):
        self.params, self.variables = list(params), []
        self.position, self.replaying = 0, False


class _Scope(threading.local):
    trace = None  # the _Trace of the get_updates call running in this thread


_scope = _Scope()


def made_once(make, shape, dtype):
    """A new variable from ``make()``; inside ``get_updates`` after the first step, the
    one the first step made at this position instead (its value is kept).

    Raises:
        ValueError: If this call of ``get_updates`` asks for other variables
            (more, or of another shape or dtype) than the first one made.
    """
    trace = _scope.trace
    if trace is None:
        return make()
    if not trace.replaying:
        variable = make()
        trace.variables.append(variable)
        return variable
    if trace.position >= len(trace.variables):
        raise ValueError(f'get_updates made more variables than on its first call '
                         f'({len(trace.variables)}); it must make the same ones on every call')
    variable = trace.variables[trace.position]
    trace.position += 1
    if tuple(variable.shape) != tuple(shape) or variable.dtype != np.dtype(dtype):
        raise ValueError(f'get_updates asked for variable {trace.position} with shape '
                         f'{tuple(shape)} and dtype {np.dtype(dtype)}; its first call made it '
                         f'with {tuple(variable.shape)} and {variable.dtype}')
    return variable


def traced_updates(optimizer, params, loss):
    """``optimizer.get_updates(loss=loss, params=params)``, its variables made once per
    list of parameters (kept in ``optimizer._traces``); returns the list of updates."""
    key = tuple(id(param) for param in params)
    trace = optimizer._traces.get(key)
    fresh = trace is None
    if fresh:
        trace = _Trace(params)
    trace.position, trace.replaying = 0, not fresh
    previous, _scope.trace = _scope.trace, trace
    try:
        # Updates are assignments, not part of anything differentiated.
        with no_grad():
            updates = optimizer.get_updates(loss=loss, params=params)
    finally:
        _scope.trace = previous
    if not fresh and trace.position != len(trace.variables):
        raise ValueError(f'get_updates made {trace.position} variables, its first call '
                         f'{len(trace.variables)}; it must make the same ones on every call')
    if fresh:  # kept only once a call succeeded
        optimizer._traces[key] = trace
    return [] if updates is None else list(updates)


def apply_step(optimizer, params, active, grads):
    """One training step of a ``get_updates`` optimizer.

    Args:
        optimizer: The optimizer.
        params: The parameters trained.
        active: Indices of the parameters that have a gradient.
        grads: Their gradient arrays (the others get zeros).
    """
    given = dict(zip(active, grads))
    tensors = [Tensor.wrap(given[index]) if index in given else
               Tensor.wrap(param.xp.zeros(param.shape, param.dtype))
               for index, param in enumerate(params)]
    run_updates(traced_updates(optimizer, params, StepLoss(params, tensors)))
    if not isinstance(optimizer.iterations, Tensor):
        # get_updates counts its steps in its own iterations variable when it has one.
        optimizer.iterations += 1
    optimizer._params = params


def build(optimizer, params):
    """Make ``get_updates``'s variables for ``params`` without a step (Keras 2 makes its
    train function before loading an optimizer's state): one call, on zero
    gradients, whose updates are not applied."""
    key = tuple(id(param) for param in params)
    if key not in optimizer._traces:
        zeros = [Tensor.wrap(param.xp.zeros(param.shape, param.dtype)) for param in params]
        traced_updates(optimizer, params, StepLoss(params, zeros))
    optimizer._params = params


def is_built_for(optimizer, params):
    """Whether ``get_updates`` has made its variables for ``params``."""
    return tuple(id(param) for param in params) in optimizer._traces


def variable_names(prefix, variables):
    """Unique names for a get_updates optimizer's state variables ('MySGD/variable_3:0')."""
    names, seen = [], set()
    for index, variable in enumerate(variables):
        base = (getattr(variable, 'name', None) or f'weight_{index}').rpartition(':')
        name = f'{prefix}/{base[0] or base[2]}'
        name = name if name not in seen else f'{name}_{index}'
        seen.add(name)
        names.append(f'{name}:0')
    return names


def set_variables(owner, variables, arrays):
    """Copy ``arrays`` into ``variables`` (a get_updates optimizer's state), all or nothing."""
    if len(arrays) != len(variables):
        raise ValueError(f'{owner}.set_weights: expected {len(variables)} arrays, got '
                         f'{len(arrays)}; a get_updates optimizer makes its variables on its '
                         f'first step (or build(params))')
    for variable, array in zip(variables, arrays):
        if tuple(array.shape) != tuple(variable.shape):
            raise ValueError(f'{owner}.set_weights: {getattr(variable, "name", "a variable")} '
                             f'has shape {tuple(variable.shape)}, got an array of shape '
                             f'{array.shape}')
    for variable, array in zip(variables, arrays):
        variable.data[...] = variable.xp.asarray(array, dtype=variable.dtype)
