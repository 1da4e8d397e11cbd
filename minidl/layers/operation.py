"""Functions of tensors applied to symbolic tensors, recorded as graph nodes.

Keras 2 lets backend functions, losses and Python operators take the symbolic
tensors of a functional graph (``kl = 1 + z_log_var - K.square(z_mean)``).
Here a function decorated with :func:`recordable` runs as usual on Tensors;
given a symbolic tensor anywhere in its arguments, it computes nothing and
records a node of an :class:`Operation` layer, which holds the function and
its other arguments. ``Model`` then replays that node like any layer's.
:class:`~minidl.layers.symbolic.SymbolicTensor`'s operators record their
nodes through :func:`record` too.

The output shapes and dtypes come from running the function on stand-in
values with each unknown size taken as 2, then as 3: a size that changes
with them is unknown in the output too. Floating inputs stand in as ones;
integer ones (``K.shape(x)``, labels) are computed from the graph's inputs
standing in as ones (zeros if integer).
"""

import contextlib
import functools
import operator
import threading

import numpy as np

from minidl.naming import unique_name
from minidl.layers import weight_budget
from minidl.layers.base import Layer
from minidl.layers.runs import not_recording_losses
from minidl.layers.input_layer import InputLayer
from minidl.layers.nest import flatten, map_structure
from minidl.layers.replay import evaluate
from minidl.layers.symbolic import Node, SymbolicTensor, get_source_inputs
from minidl.tensor import Tensor, no_grad

# Sizes that stand for unknown sizes while the output shape is found.
_STAND_IN_SIZES = (2, 3)


class Operation(Layer):
    """The layer of a node that applies ``function`` in a graph.

    Its inputs are the symbolic tensors found in the arguments, in order; the
    arguments are kept with a placeholder in their place. Like a Lambda
    layer it holds code, so it cannot be saved with a model's architecture.

    Args:
        function: The function applied.
        args: Its positional arguments, symbolic tensors replaced by
            ``_Slot`` placeholders.
        kwargs: Its keyword arguments, likewise.
        name: Layer name; the function's name, numbered, by default.
    """

    def __init__(self, function, args, kwargs, name=None):
        super().__init__(name=name or unique_name(function_name(function)))
        self.function, self.args, self.kwargs = function, args, kwargs
        self.built = True

    def call(self, inputs):
        values = list(inputs)

        def fill(leaf):
            return values[leaf.index] if isinstance(leaf, _Slot) else leaf

        return self.function(*map_structure(fill, self.args), **map_structure(fill, self.kwargs))

    def get_config(self):
        raise TypeError(
            f'layer {self.name!r} applies {function_name(self.function)} to symbolic tensors: '
            f'it holds Python code, which minidl does not serialize (loading a model never runs '
            f'code). Save the weights only, or compute it in a Layer subclass with get_config')


class _Slot:
    """Where the ``index``-th symbolic input goes in an Operation's arguments."""

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f'<input {self.index}>'


def function_name(function):
    """The name an Operation layer takes from its function ('square', 'add', ...)."""
    return getattr(function, '__name__', type(function).__name__)


def has_symbolic(args, kwargs):
    """Whether a symbolic tensor is among ``args`` and ``kwargs`` (at any depth)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, SymbolicTensor):
            return True
        if isinstance(value, (list, tuple, dict)) and any(
                isinstance(leaf, SymbolicTensor) for leaf in flatten(value)):
            return True
    return False


def record(function, args, kwargs, outputs=None):
    """Record ``function(*args, **kwargs)`` as a node and return its symbolic output(s).

    Args:
        function, args, kwargs: The call recorded.
        outputs: Optionally, the ``(shape, dtype)`` of each output, in a
            list, when the caller knows them: the function is then not run
            on stand-ins (a gradient's shapes are its variables', whatever
            sizes stand-ins could take).

    Raises:
        ValueError: If running the function on stand-in values fails (naming
            the function and the shapes), or it returns something else than
            Tensors.
    """
    symbols = []

    def to_slot(leaf):
        if isinstance(leaf, SymbolicTensor):
            symbols.append(leaf)
            return _Slot(len(symbols) - 1)
        return leaf

    args, kwargs = map_structure(to_slot, (tuple(args), dict(kwargs)))
    layer = Operation(function, args, kwargs)
    if outputs is None:
        structure, specs = _infer_outputs(layer, symbols)
    else:
        structure, specs = [None] * len(outputs), outputs
    node = Node(layer, symbols, {}, None)
    tensors = iter([SymbolicTensor(shape, dtype, node, index)
                    for index, (shape, dtype) in enumerate(specs)])
    outputs = map_structure(lambda leaf: next(tensors), structure)
    node.outputs = outputs
    layer._inbound_nodes.append(node)
    return outputs


def _recorded(function, reflected=False):
    def operator_method(self, *other):
        return record(function, (*other, self) if reflected else (self, *other), {})
    return operator_method


# Python's operators on symbolic tensors record Operation nodes. They are set
# here, beside record, so that symbolic.py (which Layer's module imports)
# needs nothing from this module. Importing minidl.layers imports this module
# (masking.py builds on it), so they are in place before any graph is built.
for _name in ['add', 'sub', 'mul', 'truediv', 'pow', 'matmul']:
    setattr(SymbolicTensor, f'__{_name}__', _recorded(getattr(operator, _name)))
    setattr(SymbolicTensor, f'__r{_name}__', _recorded(getattr(operator, _name), reflected=True))
for _name in ['lt', 'le', 'gt', 'ge', 'neg', 'abs', 'getitem']:
    setattr(SymbolicTensor, f'__{_name}__', _recorded(getattr(operator, _name)))


def recordable(function):
    """Decorate a function of Tensors so that symbolic arguments record a graph node.

    With no symbolic tensor among its arguments the function simply runs;
    otherwise it returns symbolic tensors computed by an :class:`Operation`
    node when the graph is replayed.
    """
    @functools.wraps(function)
    def run_or_record(*args, **kwargs):
        if has_symbolic(args, kwargs):
            return record(function, args, kwargs)
        return function(*args, **kwargs)

    return run_or_record


class _Probing(threading.local):
    """How many shape probes are in progress in this thread (others run for real)."""

    depth = 0


_probes = _Probing()


@contextlib.contextmanager
def _probing():
    _probes.depth += 1
    try:
        yield
    finally:
        _probes.depth -= 1


def is_probing():
    """Whether the function now running only serves to find output shapes.

    Functions with side effects (printing) skip them then.
    """
    return _probes.depth > 0


def _infer_outputs(layer, symbols):
    """What the function returns on stand-ins, and the ``(shape, dtype)`` of each output."""
    runs = [_run_on_stand_ins(layer, symbols, size) for size in _STAND_IN_SIZES]
    leaves = [flatten(outputs) for outputs in runs]
    for outputs in leaves:
        for output in outputs:
            if not isinstance(output, Tensor):
                raise ValueError(f'{function_name(layer.function)} on symbolic tensors returned '
                                 f'{output!r}, not Tensors')
    first, second = leaves
    if len(first) != len(second) or any(y.ndim != z.ndim for y, z in zip(first, second)):
        raise ValueError(f'{function_name(layer.function)}: the number of its outputs or of their '
                         f'dimensions depends on the batch size, which a graph cannot describe')
    shapes = [tuple(a if a == b else None for a, b in zip(y.shape, z.shape))
              for y, z in zip(first, second)]
    return runs[0], [(shape, y.dtype) for shape, y in zip(shapes, first)]


def _run_on_stand_ins(layer, symbols, unknown_size):
    try:
        with no_grad(), not_recording_losses(), _probing(), np.errstate(all='ignore'):
            return layer.call([_stand_in(symbol, unknown_size) for symbol in symbols])
    except Exception as error:
        shapes = ', '.join(str(s.shape) for s in symbols)
        raise ValueError(f'{function_name(layer.function)} cannot be applied to the symbolic '
                         f'tensors of shapes {shapes}: on stand-in values of those shapes it '
                         f'raised {type(error).__name__}: {error}') from error


def _stand_in(symbol, unknown_size):
    """A value for ``symbol``: ones if floating; an integer or boolean one (a size, an
    index, a label) is computed from stand-ins of its graph's inputs instead, as it
    is a value that ones or zeros may not stand for (unless its function says it
    ``depends_on_shapes_only``, as ``K.shape`` does)."""
    layer = symbol.node.layer
    if getattr(getattr(layer, 'function', None), 'depends_on_shapes_only', False):
        # K.shape(x): its value follows from the stand-in's shape, with no need to
        # replay the graph before it (which stand-in sizes of 2 may not get through).
        parents = [_stand_in(parent, unknown_size) for parent in symbol.node.inbound]
        with no_grad(), _probing():
            return flatten(layer.call(parents))[symbol.index]
    if symbol.dtype.kind != 'f' and not isinstance(layer, InputLayer):
        sources = get_source_inputs(symbol)
        feeds = {id(source): _stand_in(source, unknown_size) for source in sources}
        return evaluate([symbol], feeds)[0]
    shape = tuple(unknown_size if size is None else size for size in symbol.shape)
    weight_budget.reserve_array(layer, 'a stand-in input', shape, np.dtype(symbol.dtype),
                                kept=False)
    return Tensor(np.full(shape, 1 if symbol.dtype.kind == 'f' else 0, symbol.dtype))
