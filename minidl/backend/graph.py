"""Running graphs: ``function``, ``gradients``, ``stop_gradient``; sessions and scopes.

``function(inputs, outputs)`` makes a callable on numpy arrays that feeds the
symbolic ``inputs`` and computes ``outputs`` by replaying the graph between
them. ``gradients(loss, variables)`` works on Tensors (through autograd) and
on symbolic tensors (recording a node that computes the gradients when the
graph is replayed), so the Keras 2 idiom

    grads = K.gradients(loss, model.input)[0]
    iterate = K.function([model.input], [loss, grads])

computes gradients with respect to inputs, tensors inside a graph, or weights.
"""

import contextlib

import numpy as np

from minidl.backend.phase import LearningPhase, learning_phase, reset_learning_phase
from minidl.backend.tensor_gradients import tensor_gradients
from minidl.layers.replay import evaluate
from minidl.compute import to_numpy
from minidl.naming import clear_session as clear_names
from minidl.layers.graph_recording import GraphNotRecorded, is_recording_graph, recording_graph
from minidl.layers.runs import not_recording_losses, runs
from minidl.layers.operation import has_symbolic, is_probing, record, recordable
from minidl.layers.symbolic import SymbolicTensor, get_source_inputs
from minidl.layers.updates import apply_updates, as_update, operands
from minidl.optimizers.keras_updates import StepLoss
from minidl.tensor import Tensor, no_grad


class Function:
    """A callable computing ``outputs`` from values fed to ``inputs`` (see :func:`function`)."""

    def __init__(self, inputs, outputs, updates=None, name=None):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f'function: inputs must be a list of tensors, got {inputs!r}')
        for tensor in inputs:
            if not isinstance(tensor, (SymbolicTensor, LearningPhase)):
                raise TypeError(f'function: each input must be a symbolic tensor (a placeholder, '
                                f'a model input) or K.learning_phase(), got {tensor!r}')
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self.updates = [as_update(update) for update in updates or []]
        self.name = name

    def __call__(self, inputs):
        """The outputs' values (numpy arrays) for the values of the inputs, in order."""
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(inputs) != len(self.inputs):
            raise ValueError(f'function takes {len(self.inputs)} input value(s), got '
                             f'{len(inputs)}')
        feeds, training = {}, learning_phase()
        for tensor, value in zip(self.inputs, inputs):
            if isinstance(tensor, LearningPhase):
                training = int(value)
            else:
                feeds[id(tensor)] = _fed_value(tensor, value)
        targets = self.outputs + operands(self.updates)
        try:
            with no_grad():
                values = evaluate(targets, feeds, training=bool(training))
        except GraphNotRecorded:
            # A gradient taken inside the graph (a Lambda's): again, recording it all.
            feeds = {key: Tensor.wrap(value.data).requires_grad_()
                     if value.dtype.kind == 'f' else value for key, value in feeds.items()}
            with recording_graph():
                values = evaluate(targets, feeds, training=bool(training))
        # Every new value is computed before any variable changes (see minidl.layers.updates).
        apply_updates(self.updates, values[len(self.outputs):])
        results = [np.array(to_numpy(getattr(value, 'data', value)))
                   for value in values[:len(self.outputs)]]
        return results[0] if self._single else results


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """A callable that computes ``outputs`` from numpy values of ``inputs``.

    Args:
        inputs: List of symbolic tensors to feed (placeholders, model inputs,
            or tensors inside a graph), and optionally ``K.learning_phase()``
            to feed the learning phase (0 or 1; 0 by default).
        outputs: A symbolic tensor or Tensor, or a list of them.
        updates: Update operations (``K.update(x, new_x)``, ``K.update_add``,
            ...) or pairs ``(variable, new_value)``: after each call each
            runs, with its operand computed from the values fed.
        name: Ignored; Keras's name for the function.
        **kwargs: TensorFlow session arguments, not supported.

    Returns:
        A :class:`Function`: ``f(list_of_arrays)`` returns a list of numpy
        arrays (one array when ``outputs`` is a single tensor).
    """
    if kwargs:
        raise TypeError(f'function: unexpected arguments {", ".join(sorted(kwargs))} '
                        f'(TensorFlow session arguments have no equivalent in minidl)')
    return Function(inputs, outputs, updates, name)


def gradients(loss, variables):
    """The gradients of ``sum(loss)`` with respect to each variable.

    Args:
        loss: A Tensor, a symbolic tensor of a graph, or the loss a training
            step passes to an optimizer's ``get_updates`` (whose gradients
            are the step's, computed already).
        variables: A tensor or a list. For a Tensor ``loss``, Tensors it
            is computed from: leaves of its graph (variables, weights) or
            results inside it (a layer's output within a Lambda); the
            latter's gradients are constants (see
            :mod:`minidl.backend.tensor_gradients`). For a symbolic
            ``loss``, symbolic tensors it is computed from (inputs or
            tensors inside the graph) and Tensors (weights) it uses.

    Returns:
        A list with one gradient per variable, of its shape: Tensors for a
        Tensor ``loss``, symbolic tensors for a symbolic one. Where ``loss``
        does not depend on a variable its gradient is zeros (TensorFlow
        gives None there).

    Raises:
        GraphNotRecorded: For a Tensor ``loss`` computed where autograd
            records nothing (inside ``no_grad``); a model's forward pass
            catches it and runs again with recording on.
    """
    variables = list(variables) if isinstance(variables, (list, tuple)) else [variables]
    if isinstance(loss, StepLoss):  # in an optimizer's get_updates: the step's gradients
        return loss.gradients(variables)
    if isinstance(loss, SymbolicTensor):
        for variable in variables:
            if not isinstance(variable, (SymbolicTensor, Tensor)):
                raise TypeError(f'gradients: variables must be tensors, got {variable!r}')
        sources = get_source_inputs(loss)
        watched = [v for v in variables if isinstance(v, SymbolicTensor)]
        # Each gradient has its variable's shape: nothing to find out by running it on
        # stand-ins (which a graph that pools stand-in sizes of 2 could not even take).
        specs = [(tuple(v.shape), v.dtype) for v in variables]
        return list(record(_GraphGradients(loss, sources, variables), sources + watched, {},
                           outputs=specs))
    if has_symbolic([variables], {}):
        raise TypeError('gradients: the loss is a Tensor, so the variables cannot be symbolic')
    for variable in variables:
        if not isinstance(variable, Tensor):
            raise TypeError(f'gradients: variables must be tensors, got {variable!r}')
    if not isinstance(loss, Tensor):
        raise TypeError(f'gradients: the loss must be a tensor, got {loss!r}')
    if not is_recording_graph() and not is_probing():
        # Inside predict or evaluate: the layer graph reruns with recording on.
        raise GraphNotRecorded(
            'K.gradients of a Tensor needs the graph of operations between the loss and the '
            'variables, which is not recorded inside minidl.no_grad(): compute the loss '
            'outside it')
    if runs.depth and not is_probing() and any(v.dtype.kind == 'f' and not v.requires_grad
                                               for v in variables):
        # Computed from the data by frozen layers, it is outside autograd's graph:
        # the model reruns with its inputs in the graph.
        raise GraphNotRecorded(f'K.gradients at a tensor outside autograd\'s graph, of shape '
                               f'{next(v.shape for v in variables if not v.requires_grad)}')
    if all(variable.creator is None for variable in variables):
        return _leaf_gradients(loss, variables, retain_graph=True)
    return tensor_gradients(loss, variables)


class _GraphGradients:
    """The computation behind the node that :func:`gradients` records for a symbolic loss.

    Called with the values of the loss's source inputs, then of the symbolic
    variables, it replays the graph from the sources to the loss, collecting
    the gradient at each symbolic variable, and differentiates.
    """

    __name__ = 'gradients'

    def __init__(self, loss, sources, variables):
        self.loss, self.sources, self.variables = loss, sources, variables

    def __call__(self, *values):
        watched = {id(v) for v in self.variables if isinstance(v, SymbolicTensor)}
        leaves = {}

        def watch(symbol, value):
            # Adding a leaf of zeros taps the gradient at this tensor without cutting
            # the graph: gradients still flow on to the tensors it is computed from.
            if id(symbol) in watched and value.dtype.kind == 'f':
                tap = Tensor.wrap(value.xp.zeros(value.shape, value.dtype)).requires_grad_()
                leaves[id(symbol)] = tap
                return value + tap
            return value

        source_values = values[:len(self.sources)]
        with recording_graph(), not_recording_losses():
            feeds = {id(s): watch(s, v) for s, v in zip(self.sources, source_values)}
            loss = evaluate([self.loss], feeds, bool(learning_phase()), watch)[0]
        # Each variable's leaf (None where the loss does not reach it) and its value.
        symbolic_values = iter(values[len(self.sources):])
        targets, variable_values = [], []
        for variable in self.variables:
            symbolic = isinstance(variable, SymbolicTensor)
            targets.append(leaves.get(id(variable)) if symbolic else variable)
            variable_values.append(next(symbolic_values) if symbolic else variable)
        grads = iter(_leaf_gradients(loss, [t for t in targets if t is not None],
                                     retain_graph=False))
        return [next(grads) if target is not None else _zeros_like(value)
                for target, value in zip(targets, variable_values)]


def _leaf_gradients(loss, leaves, retain_graph):
    """Gradients of ``sum(loss)`` for the leaf Tensors ``leaves``, leaving every ``.grad`` as it
    was."""
    if not loss.requires_grad:
        return [_zeros_like(leaf) for leaf in leaves]
    graph_leaves = _graph_leaves(loss) + list(leaves)
    saved = {id(leaf): (leaf, leaf.grad) for leaf in graph_leaves}
    try:
        for leaf, _ in saved.values():
            leaf.grad = None
        loss.backward(loss.xp.ones_like(loss.data), retain_graph=retain_graph)
        return [Tensor.wrap(leaf.grad.data) if leaf.grad is not None else _zeros_like(leaf)
                for leaf in leaves]
    finally:
        for leaf, grad in saved.values():
            leaf.grad = grad


def _graph_leaves(tensor):
    """The leaves requiring gradients in the graph behind ``tensor``."""
    if tensor.creator is None:
        return [tensor]
    leaves, seen, pending = [], set(), [tensor.creator]
    while pending:
        creator = pending.pop()
        if id(creator) in seen or creator.inputs is None:
            continue
        seen.add(id(creator))
        for tensor in creator.inputs:
            if tensor.creator is not None:
                pending.append(tensor.creator)
            elif tensor.requires_grad:
                leaves.append(tensor)
    return leaves


def _zeros_like(tensor):
    return Tensor.wrap(tensor.xp.zeros(tensor.shape, tensor.dtype))


def _fed_value(tensor, value):
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value), dtype=tensor.dtype)
    if len(value.shape) != len(tensor.shape) or any(
            size is not None and size != given for size, given in zip(tensor.shape, value.shape)):
        raise ValueError(f'function: a value of shape {value.shape} was fed to {tensor!r}')
    return value


@recordable
def stop_gradient(variables):
    """The tensor(s), outside the graph: no gradient flows back through them."""
    if isinstance(variables, (list, tuple)):
        return [v.detach() for v in variables]
    return variables.detach()


@recordable
def print_tensor(x, message=''):
    """Print ``message`` and the value of ``x`` whenever it is computed; returns ``x``."""
    if not is_probing():
        print(message, to_numpy(x.data))
    return x


@contextlib.contextmanager
def name_scope(name):
    """A context for naming operations, as TensorFlow's; minidl's need no scope."""
    yield


def clear_session():
    """Start afresh: layer names count from the start again and the learning phase is unset."""
    clear_names()
    reset_learning_phase()
