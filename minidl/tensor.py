"""The autograd engine: Tensor, Function and backward.

A :class:`Tensor` wraps a backend array (numpy or CuPy). Applying a
:class:`Function` to tensors computes its output arrays and, when any input
requires a gradient, records the function as the output's ``creator``. The
recorded functions form a graph that :meth:`Tensor.backward` walks from the
output back to the leaves, in reverse creation order, calling each function's
``backward`` once with the summed gradients of its outputs.

Python operators (``+``, ``@``, ``x[i]``, ...) and convenience methods
(``x.sum()``, ``x.reshape(...)``) are bound to their functions by
``minidl.functions.operators``, so that this module, the lowest layer of the
framework, imports no operation.
"""

import functools
import heapq
import itertools

import numpy as np

from minidl import config
from minidl.compute import arrays, device as devices

_per_thread = config.per_thread  # this thread's switches, read by every operation


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Args:
        data: An array, a Tensor or nested Python numbers. Floating data is
            stored in ``config.default_dtype`` (float32) unless ``dtype`` says
            otherwise; integer and boolean data keep their type. An array
            that already has the stored dtype and device is used as it is,
            without a copy.
        requires_grad: Whether gradients with respect to this tensor are
            computed by :meth:`backward` (floating dtypes only).
        dtype: Explicit dtype to store ``data`` in.
        device: Device to place the data on (defaults to the data's own device
            for arrays, else the default device).
    """

    __array_ufunc__ = None  # numpy defers to Tensor's reflected operators

    def __init__(self, data, requires_grad=False, dtype=None, device=None):
        if isinstance(data, Tensor):
            data = data.data
        if arrays.is_array(data):
            xp = arrays.get_array_module(data) if device is None else devices.Device(device).xp
        else:
            xp = devices.Device(device or devices.get_default_device()).xp
            data = np.asarray(data)
        if data.dtype.kind not in 'biuf':
            raise TypeError(f'a Tensor holds numbers or booleans, not {data.dtype} data')
        if dtype is None and data.dtype.kind == 'f':
            dtype = config.default_dtype
        self._init(_move(data, xp, dtype))
        if requires_grad:
            self.requires_grad_()

    def _init(self, array):
        self.data = array
        self.grad = None
        self.creator = None
        self._output_index = 0
        self.requires_grad = False

    @classmethod
    def wrap(cls, array):
        """A tensor holding exactly ``array``: no copy, no dtype conversion, no device move.

        For arrays made outside autograd (constants, masks, states, optimizer
        slots) and for Functions' outputs; ``Tensor(array)`` copies into the
        default floating dtype and device instead. The tensor records no graph
        and requires no gradient until ``requires_grad_()``.
        """
        tensor = cls.__new__(cls)
        tensor._init(array)
        return tensor

    def requires_grad_(self, flag=True):
        """Set ``requires_grad`` in place and return self."""
        if flag and self.data.dtype.kind != 'f':
            raise TypeError(f'only floating tensors can require gradients, not {self.dtype}')
        self.requires_grad = bool(flag)
        return self

    # ----- array attributes -------------------------------------------------

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return self.data.size

    @property
    def device(self):
        return devices.device_of(self.data)

    @property
    def xp(self):
        """The array module (numpy or cupy) holding this tensor's data."""
        return arrays.get_array_module(self.data)

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        body = np.array2string(arrays.to_numpy(self.data), separator=', ', prefix='Tensor(')
        grad = ', requires_grad=True' if self.requires_grad else ''
        return f'Tensor({body}, dtype={self.dtype}{grad})'

    def __bool__(self):
        return bool(self.data)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError('iteration over a 0-d tensor')
        return (self[i] for i in range(len(self)))

    def __array__(self, dtype=None, copy=None):
        return self.numpy() if dtype is None else self.numpy().astype(dtype)

    __hash__ = object.__hash__  # comparisons return tensors, so keep identity hashing

    # ----- conversions -----------------------------------------------------

    def numpy(self):
        """The data as a numpy array (a copy when it lives on a GPU)."""
        return arrays.to_numpy(self.data)

    def item(self):
        """The single element as a Python number."""
        return self.data.item()

    def tolist(self):
        return self.numpy().tolist()

    def detach(self):
        """A tensor sharing this one's data, outside the graph."""
        return Tensor.wrap(self.data)

    def to(self, device):
        """This tensor's data on ``device``, outside the graph; self if already there."""
        device = devices.Device(device)
        if device == self.device:
            return self
        moved = Tensor.wrap(_move(self.data, device.xp, None))
        return moved.requires_grad_(self.requires_grad)

    # ----- autograd ----------------------------------------------------------

    def backward(self, grad=None, retain_graph=False):
        """Accumulate into each leaf's ``.grad`` the gradient of this tensor.

        Args:
            grad: Gradient of the final objective with respect to this tensor;
                may be omitted for a single-element tensor (taken as 1).
            retain_graph: Keep the graph so that backward can run through it
                again; by default its saved arrays are freed as it is walked.
        """
        if not self.requires_grad:
            raise RuntimeError('backward() on a tensor that does not require grad '
                               '(no input of its graph has requires_grad=True)')
        if grad is None:
            if self.size != 1:
                raise RuntimeError(f'backward() without a gradient needs a single-element '
                                   f'tensor; this one has shape {self.shape}')
            grad = self.xp.ones_like(self.data)
        else:
            grad = _move(grad.data if isinstance(grad, Tensor) else grad, self.xp, self.dtype)
            if grad.shape != self.shape:
                raise ValueError(f'gradient of shape {grad.shape} given for a tensor of '
                                 f'shape {self.shape}')
        _backward(self, grad, retain_graph)

    def _accumulate_grad(self, grad, shared):
        """Add ``grad`` to ``.grad``, which always owns a plain writable array.

        ``shared`` says that ``grad`` is also referenced elsewhere (the caller's
        array, or one already given to another leaf): it is then copied, as are
        views, so that in-place updates of one ``.grad`` (clipping, reductions
        across processes) never reach another array.
        """
        if self.grad is not None:
            self.grad = Tensor.wrap(self.grad.data + grad)
            return
        # CuPy's flags have no 'writeable': its arrays always are.
        writeable = getattr(grad.flags, 'writeable', True)
        if shared or grad.base is not None or not (grad.flags.c_contiguous and writeable):
            grad = grad.copy()
        self.grad = Tensor.wrap(grad)

    @property
    def _generation(self):
        return 0 if self.creator is None else self.creator.generation + 1


class Function:
    """A differentiable operation on arrays, with forward and backward side by side.

    Subclasses store their non-tensor parameters in ``__init__`` and define::

        forward(self, *arrays) -> array or tuple of arrays
        backward(self, *grad_outputs) -> gradient array (or None) per input

    ``forward`` may save on ``self`` what ``backward`` needs. ``self.xp`` is
    the array module of the inputs and ``self.needs_input_grad`` tells which
    inputs want a gradient (backward may return None for the others).
    ``backward`` receives one gradient per output (zeros for outputs that did
    not reach the objective) and may return gradients of a broadcast shape:
    the engine sums them down to each input's shape. It returns new arrays or
    views of its ``grad_outputs``, never arrays it keeps.

    Inputs that are not tensors are converted: arrays and Python numbers take
    the floating dtype and device of the tensor inputs, so ``f(x32, 2.0)``
    stays float32.

    A Function object is used once: ``Exp()(x)`` returns ``exp(x)``.
    """

    def __call__(self, *inputs):
        # List comprehensions rather than generators: this runs for every operation.
        data = [x.data for x in inputs if isinstance(x, Tensor)]
        if len(data) == len(inputs):  # the common case: nothing to convert
            self.xp = arrays.get_array_module(*data)
        else:
            self.xp, float_dtype = _common_module_and_float_dtype(inputs)
            inputs = tuple([_as_input(x, self.xp, float_dtype) for x in inputs])
            data = [x.data for x in inputs]
        if _per_thread.autocast is not None:  # a mixed precision layer's call: weights cast
            inputs, data = _per_thread.autocast.cast_weights(inputs, data)
        grad_enabled = _per_thread.grad_enabled
        self.needs_input_grad = tuple([grad_enabled and x.requires_grad for x in inputs])
        outputs = self.forward(*data)
        single = not isinstance(outputs, tuple)
        # numpy reductions return scalars, not arrays: keep every tensor's data an array
        # (an ndarray, the usual output, is one already).
        outputs = [y if type(y) is np.ndarray else self.xp.asarray(y)
                   for y in ((outputs,) if single else outputs)]
        results = tuple([Tensor.wrap(y) for y in outputs])
        if any(self.needs_input_grad):
            self.inputs = inputs
            self.generation = max([x._generation for x in inputs])
            self._output_meta = tuple([(y.shape, y.dtype) for y in outputs])
            for index, result in enumerate(results):
                if result.data.dtype.kind == 'f':
                    result.requires_grad = True
                    result.creator = self
                    result._output_index = index
        return results[0] if single else results

    def forward(self, *arrays):
        raise NotImplementedError

    def backward(self, *grad_outputs):
        raise NotImplementedError

    def _release(self):
        """Drop the inputs and saved arrays once backward has passed through."""
        generation, meta = self.generation, self._output_meta
        self.__dict__.clear()
        self.generation, self._output_meta, self.inputs = generation, meta, None


def _backward(root, grad, retain_graph):
    if root.creator is None:
        root._accumulate_grad(grad, shared=True)
        return
    # Arrays that a leaf may not keep without copying, by id (kept alive, so ids stay unique).
    given = {id(grad): grad}
    # (id(function), output index) -> gradient summed so far
    pending = {(id(root.creator), root._output_index): grad}
    # Highest generation first: every consumer of a tensor runs before its creator.
    order = itertools.count()
    queue, queued = [(-root.creator.generation, next(order), root.creator)], {id(root.creator)}
    # The loop runs once per function of every training step: it reads each
    # tensor's array directly and inlines its helpers, as their calls cost as much.
    while queue:
        function = heapq.heappop(queue)[2]
        inputs = function.inputs
        if inputs is None:
            raise RuntimeError('backward through a graph whose saved arrays were already '
                               'freed; pass retain_graph=True to the first backward()')
        key = id(function)
        grad_outputs = []
        for index, (shape, dtype) in enumerate(function._output_meta):
            grad_output = pending.pop((key, index), None)
            grad_outputs.append(function.xp.zeros(shape, dtype) if grad_output is None
                                else grad_output)
        grad_inputs = function.backward(*grad_outputs)
        if not isinstance(grad_inputs, tuple):
            grad_inputs = (grad_inputs,)
        assert len(grad_inputs) == len(inputs), \
            f'{type(function).__name__}.backward returned {len(grad_inputs)} gradients ' \
            f'for {len(inputs)} inputs'
        for tensor, grad_input in zip(inputs, grad_inputs):
            if grad_input is None or not tensor.requires_grad:
                continue
            data = tensor.data
            if grad_input.shape != data.shape:
                grad_input = sum_to_shape(grad_input, data.shape)
            if grad_input.dtype != data.dtype:
                grad_input = grad_input.astype(data.dtype)
            creator = tensor.creator
            if creator is None:
                tensor._accumulate_grad(grad_input, shared=id(grad_input) in given)
                given[id(grad_input)] = grad_input
                continue
            slot = (id(creator), tensor._output_index)
            pending[slot] = grad_input if slot not in pending else pending[slot] + grad_input
            if id(creator) not in queued:
                queued.add(id(creator))
                heapq.heappush(queue, (-creator.generation, next(order), creator))
        if not retain_graph:
            function._release()


def _common_module_and_float_dtype(inputs):
    """The array module of the inputs, and the floating dtype non-tensors should take."""
    tensors = [x.data for x in inputs if isinstance(x, Tensor)]
    plain = [x for x in inputs if arrays.is_array(x)]
    xp = arrays.get_array_module(*tensors, *plain)
    float_dtype = next((a.dtype for a in tensors + plain if a.dtype.kind == 'f'), None)
    return xp, float_dtype


def _as_input(value, xp, float_dtype):
    """``value`` as a Tensor; non-tensors take ``xp`` and (if floating) ``float_dtype``."""
    if isinstance(value, Tensor):
        return value
    if not arrays.is_array(value):
        is_number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
        value = np.asarray(value, dtype=float_dtype if is_number else None)
        if value.dtype.kind == 'f' and float_dtype is None:
            value = value.astype(config.default_dtype)
    if value.dtype.kind == 'f' and float_dtype is not None:
        value = value.astype(float_dtype, copy=False)
    return Tensor.wrap(_move(value, xp, None))


def sum_to_shape(array, shape):
    """Sum ``array`` over the axes along which ``shape`` was broadcast to it."""
    extra = array.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and array.shape[extra + i] != 1)
    if axes:
        array = array.sum(axis=axes, keepdims=True)
    return array.reshape(shape)


def _move(data, xp, dtype):
    """``data`` as an array of module ``xp`` with ``dtype`` (None keeps its dtype)."""
    source = arrays.get_array_module(data)
    if source is not xp:
        data = xp.asarray(arrays.to_numpy(data)) if xp is not np else arrays.to_numpy(data)
    return data if dtype is None else data.astype(dtype, copy=False)


class no_grad:
    """Context manager (and decorator) under which no graph is recorded.

    Use it for inference and for weight updates: operations inside it return
    tensors that do not require gradients and keep no saved arrays. It acts
    on the current thread only: other threads go on recording (or not) as
    they were.

    A class rather than a generator-based context manager: the training
    loop enters it several times per step, and this costs a fraction.
    """

    def __enter__(self):
        self._previous = _per_thread.grad_enabled
        _per_thread.grad_enabled = False

    def __exit__(self, *exc_info):
        _per_thread.grad_enabled = self._previous

    def __call__(self, function):
        @functools.wraps(function)
        def without_grad(*args, **kwargs):
            with no_grad():  # one per call: calls may nest or run in several threads
                return function(*args, **kwargs)
        return without_grad
