"""The base class of optimizers: learning rate, state, clipping and the update loop.

An optimizer keeps, for each trainable parameter, a few *slot* arrays of the
parameter's shape (Adam's moments ``m`` and ``v``), plus ``iterations``, the
number of updates applied so far. ``apply_gradients(params)`` reads each
``param.grad`` and updates ``param.data`` in place.

As in Keras 2, one optimizer may be given to ``compile`` of several models
(a GAN's discriminator and combined model, say): every parameter gets its own
slots the first time it is updated, and ``iterations`` counts the updates of
all of them together, as Keras 2's single ``iterations`` variable does. The
state that :meth:`Optimizer.get_weights` and :meth:`Optimizer.weight_names`
describe (and a model file holds) is that of the parameters of the latest
``build`` or update.
"""

import math
import numbers

import numpy as np

from minidl.compute import get_array_module, is_array, to_numpy
from minidl.optimizers import keras_updates, schedules
from minidl.optimizers.clipping import clip_gradients
from minidl.tensor import Tensor

#: Elements per piece when an elementwise update runs on the CPU: the
#: arrays of one piece stay in the cache between the update's operations,
#: so memory sees each array once. 1 MB of float32 per array (in the shared
#: last-level cache) beat 256 kB (in the per-core cache): fewer pieces mean
#: fewer ufunc calls, SGD on W1 0.37 -> 0.30 ms and on W4 45 -> 42 ms.
_PIECE = 1 << 18
_KEYWORDS = ('lr', 'decay', 'clipnorm', 'clipvalue', 'global_clipnorm')


class _DefaultRate(float):
    """A learning rate left at its default, so that ``lr=`` may replace it."""

    __slots__ = ()

    def __repr__(self):
        return float.__repr__(self)


def default_rate(value):
    """``value`` marked as a default learning rate (use it in a subclass's signature)."""
    return _DefaultRate(value)


class Optimizer:
    """Base class of optimizers, with Keras 2's (OptimizerV2) arguments and state.

    Args:
        learning_rate: A non-negative float or a
            :class:`~minidl.optimizers.schedules.LearningRateSchedule`
            (evaluated at ``iterations`` before each update).
        name: Prefix of the names in :meth:`weight_names` (the class name by default).
        **kwargs: ``lr`` (legacy alias of ``learning_rate``), ``decay``
            (time-based decay: the rate is divided by ``1 + decay * iterations``),
            ``clipvalue``, ``clipnorm`` (each gradient array clipped to that L2
            norm on its own) and ``global_clipnorm`` (all of them together).

    Writing an optimizer: a subclass passes its learning rate, name and
    ``**kwargs`` to this constructor (declare ``learning_rate=default_rate(0.01)``
    so that it can tell a given ``lr=`` from a given ``learning_rate``),
    stores its hyper-parameters as attributes, and defines

    - ``slot_names``: the names of its per-parameter state arrays, in the
      order :meth:`get_weights` lists them (e.g. ``('m', 'v')``). Each slot
      is created, once, with the parameter's array module, dtype and shape,
      filled with ``slot_initial_value(slot_name)`` (0.0 unless overridden).
    - ``update(param, grad, slots, step, lr)``: updates the array ``param``
      and the arrays in the dict ``slots`` IN PLACE (``param -= lr * grad``,
      ``xp.multiply(m, beta, out=m)``; never ``param = ...``), from the array
      ``grad`` (already clipped), the 1-based ``step`` (``iterations + 1``)
      and the float learning rate ``lr`` of this step. Use
      ``minidl.compute.get_array_module(param)`` for functions like ``sqrt``.
    - ``get_config()``: the base config plus its hyper-parameters.

    ``update`` may compute its temporaries into :meth:`scratch` arrays
    rather than new ones (``xp.multiply(grad, lr, out=self.scratch(grad))``).

    Or, as in Keras 2, override ``get_updates(loss, params)``: it gets the
    gradients with ``self.get_gradients(loss, params)`` (or ``K.gradients``),
    makes its state with ``K.zeros``/``K.variable`` and returns the list of
    ``K.update``/``K.update_add`` operations; ``self.weights`` lists its
    state for saving. The training step calls it at every step and applies
    the updates (:mod:`minidl.optimizers.keras_updates` says how).

    Optionally: ``elementwise = True`` when ``update`` treats every element
    on its own, which lets large parameters on the CPU be updated piece by
    piece (faster: the pieces stay in the cache); ``state_names``, the names
    of float attributes that hold state shared by all parameters (saved by
    :meth:`get_weights` after ``iterations``); and ``begin_step(step, lr)``,
    called once per update before the parameters' ``update`` calls, to
    advance that state.

    Attributes:
        iterations: Number of updates applied.
        strategy: None here. A distributed wrapper (``minidl_dist``'s
            DistributedOptimizer) sets it to the Strategy the training loop
            then uses to shard batches and reduce gradients over processes.
    """

    strategy = None
    slot_names = ()
    state_names = ()
    elementwise = False

    def __init__(self, learning_rate=default_rate(0.001), name=None, **kwargs):
        cls = type(self).__name__
        unknown = sorted(set(kwargs) - set(_KEYWORDS))
        if unknown:
            raise TypeError(f'{cls}: unexpected keyword argument(s) {", ".join(unknown)}; '
                            f'accepted besides the hyper-parameters: {", ".join(_KEYWORDS)}')
        if 'lr' in kwargs:
            if not isinstance(learning_rate, _DefaultRate):
                raise TypeError(f'{cls}: got both learning_rate and its legacy alias lr; pass one')
            learning_rate = kwargs.pop('lr')
        if isinstance(learning_rate, dict):
            learning_rate = schedules.deserialize(learning_rate)
        self.learning_rate = learning_rate
        self.decay = check_number(cls, 'decay', kwargs.pop('decay', 0.0))
        clipping = {argument: kwargs.get(argument)
                    for argument in ('clipnorm', 'clipvalue', 'global_clipnorm')}
        for argument, value in clipping.items():
            if value is not None:
                clipping[argument] = check_number(cls, argument, value)
                if clipping[argument] == 0:
                    raise ValueError(f'{cls}: {argument} must be positive, got {value!r}')
        if clipping['clipnorm'] is not None and clipping['global_clipnorm'] is not None:
            raise ValueError(f'{cls}: pass clipnorm or global_clipnorm, not both')
        self.clipnorm = clipping['clipnorm']
        self.clipvalue = clipping['clipvalue']
        self.global_clipnorm = clipping['global_clipnorm']
        self.name = name or cls
        self.iterations = 0
        self._params = None  # the parameters get_weights describes (the latest built)
        # id(param) -> (param, {slot name: array}); the param is kept so its id stays its own.
        self._param_slots = {}
        self._scratch_arrays = {}  # see scratch()
        # Keras 2's attributes, which a get_updates optimizer sets: its update operations
        # and its state variables (see the weights property).
        self.updates, self._keras_weights = [], None
        self._traces = {}  # a get_updates optimizer's variables per list of params

    # ----- learning rate -------------------------------------------------------

    @property
    def learning_rate(self):
        """The float rate or the LearningRateSchedule; settable (e.g. by callbacks).

        A float rate is read as a :class:`BoundNumber`, so that Keras 2's
        ``K.set_value(model.optimizer.lr, 0.01)`` can set it. A Keras 2
        optimizer may also set it to a variable (``self.lr = K.variable(0.01)``),
        which is then read and set as it is.
        """
        rate = self._learning_rate
        return rate if isinstance(rate, (schedules.LearningRateSchedule, Tensor)) else \
            BoundNumber(rate, self, 'learning_rate')

    @learning_rate.setter
    def learning_rate(self, value):
        held = self.__dict__.get('_learning_rate')
        if isinstance(held, Tensor) and not isinstance(
                value, (Tensor, schedules.LearningRateSchedule)):
            # A number set (by a callback) into a Keras 2 optimizer's rate variable goes
            # into the variable, which its get_updates reads.
            number = check_number(type(self).__name__, 'learning_rate', value)
            held.data[...] = held.xp.asarray(number, dtype=held.dtype)
            return
        if isinstance(value, Tensor):
            if value.size != 1 or value.dtype.kind != 'f':
                raise TypeError(f'{type(self).__name__}: a learning rate variable holds one '
                                f'floating number, got one of shape {value.shape} and dtype '
                                f'{value.dtype}')
        elif not isinstance(value, schedules.LearningRateSchedule):
            value = check_number(type(self).__name__, 'learning_rate', value)
        self._learning_rate = value

    lr = learning_rate  # Keras 2's legacy name, for reading and setting

    def current_learning_rate(self):
        """The float rate of the next update: the schedule at ``iterations``, then ``decay``."""
        rate = self._learning_rate
        if isinstance(rate, Tensor):
            rate = _plain(rate)
        if isinstance(rate, schedules.LearningRateSchedule):
            rate = float(rate(self.iterations))
        if self.decay > 0:
            rate /= 1.0 + self.decay * self.iterations
        return rate

    # ----- state ---------------------------------------------------------------

    def slot_initial_value(self, slot_name):
        """The value a new slot array is filled with."""
        return 0.0

    def build(self, params):
        """Create the slots of ``params`` (a list of parameter Tensors) that have none.

        ``params`` become the parameters whose state :meth:`get_weights`
        lists. Slots already made (for these or for another model's
        parameters) are kept.

        Raises:
            TypeError: If a parameter is not a floating Tensor.
        """
        params = list(params)
        for index, param in enumerate(params):
            if not isinstance(param, Tensor) or param.dtype.kind != 'f':
                raise TypeError(f'{self.name}: parameter {index} must be a floating Tensor, '
                                f'got {param!r}')
        if self.uses_get_updates:
            keras_updates.build(self, params)
            return
        for param in params:
            if id(param) not in self._param_slots:
                xp = get_array_module(param.data)
                self._param_slots[id(param)] = (param, {
                    slot: xp.full(param.shape, self.slot_initial_value(slot), param.dtype)
                    for slot in self.slot_names})
        self._params = params

    def has_slots_for(self, params):
        """Whether every Tensor of ``params`` has slots (has been built or updated)."""
        if self.uses_get_updates:
            return keras_updates.is_built_for(self, list(params))
        return all(id(param) in self._param_slots for param in params)

    @property
    def built(self):
        return self._params is not None

    def get_slot(self, param, slot_name):
        """The live slot array ``slot_name`` of the parameter Tensor ``param``."""
        return self._slots_of(param)[slot_name]

    def set_slot(self, param, slot_name, array):
        """Replace the slot array ``slot_name`` of the parameter Tensor ``param`` (any shape:
        a distributed strategy that shards a parameter shards its slots with it)."""
        self._slots_of(param)[slot_name] = array

    def _slots_of(self, param):
        entry = self._param_slots.get(id(param))
        if entry is None:
            raise ValueError(f'{self.name} has no slots for the parameter {_name(param, None)!r}')
        return entry[1]

    def weight_names(self):
        """Names of the arrays of :meth:`get_weights`, in Keras 2's style
        ('Adam/dense/kernel/m:0')."""
        if self.uses_get_updates:
            return keras_updates.variable_names(self.name, self.weights)
        names = [f'{self.name}/iter:0'] + [f'{self.name}/{state}:0' for state in self.state_names]
        return names + [f'{self.name}/{param}/{slot}:0'
                        for slot in self.slot_names for param in self._names()]

    def get_weights(self):
        """Copies of the state: iterations (int64), the shared state, then the slots slot by slot
        (for a ``get_updates`` optimizer: the values of its ``weights``, as in Keras 2)."""
        if self.uses_get_updates:
            return [np.array(to_numpy(weight.data)) for weight in self.weights]
        arrays = [np.array(self.iterations, dtype=np.int64)]
        arrays += [np.array(getattr(self, state), dtype=np.float64) for state in self.state_names]
        return arrays + [np.array(to_numpy(a)) for a in self._slot_arrays()]

    def set_weights(self, weights):
        """Restore the state from arrays in the order of :meth:`get_weights`.

        The slots must exist (``build`` or an update happened). The arrays
        are copied into the existing slots.

        Raises:
            ValueError: If the number of arrays or a shape does not match.
        """
        weights = [to_numpy(w) if is_array(w) else np.asarray(w) for w in weights]
        if self.uses_get_updates:
            keras_updates.set_variables(self.name, self.weights, weights)
            return
        names = self.weight_names()
        if len(weights) != len(names):
            hint = '' if self.built else '; call build(params) before set_weights'
            raise ValueError(f'{self.name}.set_weights: expected {len(names)} arrays '
                             f'({", ".join(names)}), got {len(weights)}{hint}')
        slots = self._slot_arrays()
        shapes = [()] * (1 + len(self.state_names)) + [a.shape for a in slots]
        for name, array, shape in zip(names, weights, shapes):
            if array.shape != shape:
                raise ValueError(f'{self.name}.set_weights: {name} has shape {shape}, '
                                 f'got an array of shape {array.shape}')
        self.iterations = int(weights[0])
        for state, array in zip(self.state_names, weights[1:]):
            setattr(self, state, float(array))
        for slot, array in zip(slots, weights[1 + len(self.state_names):]):
            slot[...] = get_array_module(slot).asarray(array, dtype=slot.dtype)

    def weight_shapes(self):
        """The shapes of the arrays of :meth:`get_weights`, in order (the optimizer built)."""
        if self.uses_get_updates:
            return [tuple(weight.shape) for weight in self.weights]
        return [()] * (1 + len(self.state_names)) + [tuple(a.shape) for a in self._slot_arrays()]

    @property
    def weights(self):
        """Keras 2's list of the optimizer's state variables.

        A ``get_updates`` optimizer sets it (``self.weights = [self.iterations]
        + moments``). A built-in one lists a copy of ``iterations``, then its
        shared state and slot arrays as Tensors viewing them (in
        :meth:`get_weights` order), so ``K.batch_get_value(opt.weights)``
        reads them and ``K.set_value`` on a slot writes into it.
        """
        if self._keras_weights is not None:
            return self._keras_weights
        state = [Tensor.wrap(np.array(self.iterations, dtype=np.int64))] + [
            Tensor.wrap(np.array(getattr(self, name), dtype=np.float64))
            for name in self.state_names]
        return state + [Tensor.wrap(array) for array in self._slot_arrays()]

    @weights.setter
    def weights(self, variables):
        self._keras_weights = list(variables)

    @property
    def uses_get_updates(self):
        """Whether this optimizer updates through Keras 2's ``get_updates`` (a subclass
        overrides it) instead of ``update``."""
        return type(self).get_updates is not Optimizer.get_updates

    def to(self, device):
        """Move the slots to ``device`` ('cpu' or 'gpu'); returns self."""
        for _, slots in self._param_slots.values():
            for slot, array in slots.items():
                slots[slot] = Tensor(array, dtype=array.dtype, device=device).data
        return self

    def _slot_arrays(self):
        params = self._params or []
        return [self._slots_of(param)[slot] for slot in self.slot_names for param in params]

    def _names(self):
        return _names(self._params or [])

    # ----- the update ----------------------------------------------------------

    def apply_gradients(self, params):
        """Update each parameter Tensor of ``params`` in place from its ``.grad``.

        Builds the slots on first use, clips the gradients, updates the
        parameters whose ``.grad`` is not None (the others are left alone),
        and increments ``iterations``. Gradients are left as they are.

        Raises:
            ValueError: If a gradient's shape differs from its parameter's,
                or if no parameter has a gradient.
        """
        params = list(params)
        active, grads = [], []
        for index, param in enumerate(params):
            grad = getattr(param, 'grad', None)
            if grad is None:
                continue
            grad = grad.data if isinstance(grad, Tensor) else grad
            # Arrays of one type are of one module; only others need the (slower) lookup.
            other_module = type(grad) is not type(param.data) and \
                get_array_module(grad) is not get_array_module(param.data)
            if grad.shape != param.shape or other_module:
                raise ValueError(f'{self.name}: the gradient of {_name(param, index)!r} has shape '
                                 f'{grad.shape} on {get_array_module(grad).__name__}, its '
                                 f'parameter {param.shape} on '
                                 f'{get_array_module(param.data).__name__}')
            active.append(index)
            grads.append(grad.astype(param.dtype, copy=False))
        if params and not active:
            raise ValueError(f'{self.name}: no gradient for any of the parameters '
                             f'[{", ".join(_names(params))}]; is the loss connected to them?')
        if self.uses_get_updates:  # Keras 2's way; built-in optimizers never go there
            keras_updates.apply_step(self, params, active, grads)
            return
        self.build(params)
        grads = clip_gradients(grads, self.clipvalue, self.clipnorm, self.global_clipnorm)
        step, rate = self.iterations + 1, self.current_learning_rate()
        self.begin_step(step, rate)
        for index, grad in zip(active, grads):
            slots = dict(self._slots_of(params[index]))
            self._update_in_pieces(params[index].data, grad, slots, step, rate)
        self.iterations += 1

    def get_scaled_loss(self, loss):
        """The loss whose gradients :meth:`apply_gradients` expects in ``.grad``.

        The training step differentiates what this returns: here the loss
        itself; a :class:`~minidl.mixed_precision.LossScaleOptimizer`
        multiplies it by its loss scale (and divides the gradients again).
        """
        return loss

    def get_updates(self, loss, params):
        """Keras 2's way to write an optimizer: return the update operations of one step.

        Override it (see the class docstring); minidl's built-in optimizers
        update through :meth:`update` instead, and do not implement it.

        Args:
            loss: What the training step passes: give it to
                :meth:`get_gradients` or ``K.gradients``.
            params: The parameters (Tensors) to update.
        """
        raise NotImplementedError(
            f'{type(self).__name__} updates the weights itself during fit (apply_gradients) '
            f'and has no get_updates; Keras 2 optimizers written with get_updates are '
            f'subclasses of minidl.optimizers.Optimizer that override it')

    def get_gradients(self, loss, params):
        """The gradients of ``loss`` for ``params``, clipped as this optimizer clips.

        Args:
            loss: The loss that the training step passed to :meth:`get_updates`.
            params: Its parameters (Tensors).

        Returns:
            One Tensor per parameter: the step's gradient (zeros where the
            loss does not reach the parameter), clipped by ``clipvalue``,
            ``clipnorm`` (each array on its own, as minidl's built-in
            optimizers do; Keras 2.2.4 scaled them all by their global norm,
            which is ``global_clipnorm`` here) and ``global_clipnorm``.

        Raises:
            TypeError: For another loss: the gradients minidl computes are
                those of a training step.
        """
        if not isinstance(loss, keras_updates.StepLoss):
            raise TypeError(f'{self.name}.get_gradients: minidl calls get_updates with the '
                            f'loss of a training step (compile, then fit or train_on_batch); '
                            f'it cannot differentiate {loss!r}')
        grads = [grad.data for grad in loss.gradients(params)]
        grads = clip_gradients(grads, self.clipvalue, self.clipnorm, self.global_clipnorm)
        return [Tensor.wrap(grad) for grad in grads]

    def begin_step(self, step, lr):
        """Called once per update, before the ``update`` calls (advance shared state here)."""

    def update(self, param, grad, slots, step, lr):
        """Update the arrays ``param`` and ``slots`` in place; see the class docstring."""
        raise NotImplementedError

    def scratch(self, like, index=0):
        """An array of ``like``'s shape and dtype for a temporary of :meth:`update`.

        Its values are undefined, and the next call with the same ``index``
        (and array type and dtype) returns the same memory again: use
        separate indices for temporaries needed at the same time. A new array
        of a megabyte costs about as much as the arithmetic on it (its fresh
        pages fault in), so arrays of up to ``_PIECE`` elements (every piece
        of an elementwise update on the CPU) are kept and reused; a larger
        one is allocated anew.
        """
        if like.size > _PIECE:
            return get_array_module(like).empty(like.shape, like.dtype)
        key = (type(like), like.dtype, index)
        array = self._scratch_arrays.get(key)
        if array is None or array.size < like.size:
            array = self._scratch_arrays[key] = get_array_module(like).empty(_PIECE, like.dtype)
        return array[:like.size].reshape(like.shape)

    def _update_in_pieces(self, param, grad, slots, step, lr):
        # Pieces pay off only for numpy: on a GPU each piece would be more kernel launches.
        if self.elementwise and param.size > _PIECE and get_array_module(param) is np:
            arrays = [param, grad, *slots.values()]
            if all(a.flags.c_contiguous for a in arrays):
                flat = [a.reshape(-1) for a in arrays]
                for start in range(0, param.size, _PIECE):
                    pieces = [a[start:start + _PIECE] for a in flat]
                    self.update(pieces[0], pieces[1], dict(zip(slots, pieces[2:])), step, lr)
                return
        self.update(param, grad, slots, step, lr)

    # ----- config --------------------------------------------------------------

    def get_config(self):
        """Keras 2's config: name, learning_rate (a schedule as a dict), decay, clipping."""
        rate = self._learning_rate
        config = {'name': self.name,
                  'learning_rate': schedules.serialize(rate)
                  if isinstance(rate, schedules.LearningRateSchedule) else _plain(rate),
                  'decay': _plain(self.decay)}  # a Keras 2 optimizer's may be a variable
        for argument in ('clipnorm', 'clipvalue', 'global_clipnorm'):
            if getattr(self, argument) is not None:
                config[argument] = getattr(self, argument)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new optimizer from :meth:`get_config`'s dict (schedules from their dicts)."""
        config = dict(config)
        if 'lr' in config and cls.get_updates is not Optimizer.get_updates:
            # A Keras 2 optimizer takes lr in its own signature; the base config's
            # learning_rate is the same number.
            config.pop('learning_rate', None)
        elif 'lr' in config:
            config['learning_rate'] = config.pop('lr')
        if isinstance(config.get('learning_rate'), dict):
            config['learning_rate'] = schedules.deserialize(config['learning_rate'], custom_objects)
        return cls(**config)


def check_number(owner, argument, value, low=0.0, high=math.inf):
    """``value`` as a float in ``[low, high]``, or a clear error."""
    if isinstance(value, (bool, str)) or not isinstance(value, (numbers.Real, np.ndarray)):
        raise TypeError(f'{owner}: {argument} must be a number, got {value!r}')
    value = float(value)
    if not low <= value <= high:
        raise ValueError(f'{owner}: {argument} must be in [{low}, {high}], got {value}')
    return value



def _plain(value):
    """A number kept in a variable (a one-element Tensor) as a float; others as they are."""
    return float(to_numpy(value.data).reshape(())) if isinstance(value, Tensor) else value


def _name(param, index):
    name = getattr(param, 'name', None) or f'param_{index}'
    base, _, suffix = name.rpartition(':')
    return base if base and suffix.isdigit() else name


def _names(params):
    return [_name(param, index) for index, param in enumerate(params)]


class BoundNumber(float):
    """A float read from an attribute that remembers the attribute.

    Keras 2 keeps hyperparameters in backend variables and scripts write them
    with ``K.set_value(model.optimizer.lr, value)``; minidl keeps plain
    numbers, read through this float so that ``K.set_value`` can assign
    ``setattr(owner, attribute, value)``. Everywhere else it is the float.

    Attributes:
        owner: The object the number was read from.
        attribute: The attribute's name.
    """

    def __new__(cls, value, owner, attribute):
        number = super().__new__(cls, value)
        number.owner, number.attribute = owner, attribute
        return number
