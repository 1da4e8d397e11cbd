"""The layer contract, as in Keras 2.

A layer's ``__init__`` stores its configuration; ``build(input_shape)``
creates its weights with :meth:`Layer.add_weight` the first time it sees an
input; ``call(inputs)`` computes with ``minidl.functions``;
``compute_output_shape`` gives the output shape without computing;
``get_config`` returns what ``from_config`` needs to make it again.

Calling a layer on real data (numpy arrays or Tensors) runs it. Calling it on
symbolic tensors (from ``Input``) records a node of a graph instead, which is
how functional models are made (see :mod:`minidl.layers.symbolic`).

A layer tracks what it owns by attribute: layers assigned to it (a wrapper's
inner layer) become sublayers, and random Generators assigned to it (a
Dropout's mask stream) become its generators. One walk,
:meth:`Layer.named_generators`, then finds every generator of a model, for
saving it with the model and for synchronising it across ranks.
"""

import functools
import inspect

import numpy as np

from minidl import config, constraints, initializers, regularizers
from minidl.compute import Generator, to_numpy
from minidl.naming import snake_case, unique_name
from minidl.layers import weight_budget
from minidl.layers.input_spec import check_input_specs
from minidl.layers.layer_updates import UpdateMethods
from minidl.layers.nest import flatten, map_structure
from minidl.layers.runs import (
    add_run_loss, inputs_key, layer_call, not_recording_losses, run_losses)
from minidl.layers.symbolic import Node, SymbolicTensor, is_symbolic, next_node_id
from minidl.layers import autocast, dtype_policy as policies
from minidl.registry import Registry
from minidl.tensor import Tensor, no_grad


class Layer(UpdateMethods):
    """Base class of all layers.

    Args:
        trainable: Whether the layer's weights are updated by training.
        name: Unique name; by default the class name in snake case, numbered
            ('dense', 'dense_1', ...).
        dtype: Floating dtype of the weights (``config.default_dtype``), or a
            dtype policy (:mod:`minidl.mixed_precision`: 'mixed_float16'
            computes in float16 with float32 weights); by default the global
            policy, which is ``config.default_dtype`` unless set.
        input_shape: Shape of one sample, for the first layer of a model.
        batch_input_shape: Shape including the batch size (may be None).
        batch_size: Fixed batch size to combine with ``input_shape``.
        input_dim: Shorthand for ``input_shape=(input_dim,)``.
        weights: Initial weights, set once the layer is built.
        activity_regularizer: Penalty on the layer's output, added to the loss.
    """

    registry = Registry('layer', functions=False)  # minidl's own classes: what loading may build
    # Whether an input mask passes through unchanged (Keras 2's attribute); a layer
    # that makes or changes masks overrides compute_mask (minidl.layers.masking).
    supports_masking = False
    # True for layers that read integer data (Embedding's indices): a model passes
    # integer data on to them as it is, instead of casting it to its float input dtype.
    integer_inputs = False
    # True for the operations that compute a mask in a graph (see _call_symbolic).
    computes_mask = False
    # How the layer's call spreads over processes, set by a distributed strategy
    # (minidl_dist's model-parallel layers): None computes the whole call here. A
    # placement's ``call(layer, inputs, **kwargs)`` replaces ``layer.call``.
    placement = None
    # Under a mixed precision policy, compute in float32 all the same (inputs cast up,
    # outputs cast back to float16), as tf.keras does for layers whose statistics
    # need float32's range: batch and layer normalization.
    keeps_float32 = False
    # Under a mixed precision policy, float16 outputs leave in float32 (a model's, for
    # its loss, metrics and predict: minidl.models.network sets it).
    float32_outputs = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith('minidl.') and not cls.__name__.startswith('_'):
            Layer.registry.register(cls)

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None,
                 batch_input_shape=None, batch_size=None, input_dim=None, weights=None,
                 activity_regularizer=None, **kwargs):
        if kwargs:
            raise TypeError(f'{type(self).__name__}: unexpected keyword arguments '
                            f'{", ".join(sorted(kwargs))}')
        self._sublayers = []
        self._generators = {}  # attribute name -> Generator, in assignment order
        self._own_weights = []  # (tensor, created trainable) in creation order
        self._regularized = []  # (tensor, regularizer)
        self._inbound_nodes = []
        self.name = name or unique_name(snake_case(type(self).__name__))
        self._trainable = bool(trainable)
        try:
            self._dtype_policy = policies.policy_of(dtype)
        except (TypeError, ValueError) as error:
            raise ValueError(f'layer {self.name!r}: dtype {dtype!r:.100} is not a dtype '
                             f'({error})') from None
        self.dtype = _checked_dtype(self, self._dtype_policy.variable_dtype)
        self.built = False
        self.input_spec = None
        self._initial_weights = weights
        self.activity_regularizer = regularizers.get(activity_regularizer)
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size,) + tuple(input_shape)
        self.batch_input_shape = None if batch_input_shape is None else tuple(batch_input_shape)

    def __setattr__(self, name, value):
        # Layers held as attributes (a wrapper's inner layer) are tracked, so that
        # their weights are part of this layer's weights; Generators likewise, so
        # that their states are saved and restored with the model.
        if isinstance(value, Layer) and name != '_sublayers' and value is not self:
            self.__dict__.setdefault('_sublayers', []).append(value)
        generators = self.__dict__.setdefault('_generators', {})
        if isinstance(value, Generator):
            generators[name] = value
        else:
            generators.pop(name, None)
        super().__setattr__(name, value)

    # ----- the contract subclasses implement --------------------------------

    def build(self, input_shape):
        """Create the weights for inputs of ``input_shape`` (batch size None)."""
        self.built = True

    def call(self, inputs, **kwargs):
        """The layer's computation on Tensors."""
        return inputs

    def compute_output_shape(self, input_shape):
        """Output shape for ``input_shape`` (None for unknown sizes).

        The default runs :meth:`call` on zeros with one sample (unknown sizes
        taken as 1) without recording a graph; override it when the layer
        has unknown sizes other than the batch, or draws random numbers.
        """
        def zeros(shape):
            shape = [1 if size is None else size for size in shape]
            weight_budget.reserve_array(self, 'a stand-in input', shape, np.dtype(self.dtype),
                                        kept=False)
            return Tensor(np.zeros(shape, self.dtype))
        with no_grad():
            outputs = self.call(map_structure_shapes(zeros, input_shape))
        return map_structure(lambda y: (None,) + tuple(y.shape[1:]), outputs)

    def compute_mask(self, inputs, mask=None):
        """The mask of the output, given the inputs and their ``mask`` (Keras 2).

        The default passes ``mask`` on when :attr:`supports_masking` is True,
        and otherwise refuses a mask, as Keras 2 does: a layer that does not
        know what padded steps mean (Flatten, Conv1D) must not silently mix
        them into its output. It is called on symbolic tensors when a graph is
        made; see :mod:`minidl.layers.masking`.

        Raises:
            TypeError: If a mask is given to a layer that does not support it.
        """
        if not self.supports_masking and any(m is not None for m in flatten(mask)):
            raise TypeError(f'layer {self.name!r} ({type(self).__name__}) does not support '
                            f'masking, but its input has a mask (from Embedding(mask_zero=True) '
                            f'or Masking); put the layer before the mask is made, or a layer '
                            f'that consumes the mask (a recurrent layer, '
                            f'GlobalAveragePooling1D) before it')
        return mask if self.supports_masking else None

    def get_config(self):
        """The arguments that recreate this layer (JSON-serialisable)."""
        policy = self.dtype_policy
        config_dict = {'name': self.name, 'trainable': self.trainable,
                       'dtype': policies.serialize(policy) if policy.is_mixed else self.dtype}
        if self.batch_input_shape is not None:
            config_dict['batch_input_shape'] = list(self.batch_input_shape)
        if self.activity_regularizer is not None:
            config_dict['activity_regularizer'] = regularizers.serialize(self.activity_regularizer)
        return config_dict

    @classmethod
    def from_config(cls, config_dict):
        """The layer that ``get_config`` describes."""
        return cls(**config_dict)

    # ----- calling ------------------------------------------------------------

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, tuple):
            inputs = list(inputs)  # a list of shapes is how several inputs are told apart
        if is_symbolic([inputs, args, kwargs]):
            if args:
                raise TypeError(f'layer {self.name!r}: on symbolic tensors, pass the arguments '
                                f'after the inputs by keyword')
            return self._call_symbolic(inputs, kwargs)
        # A layer with weights computes in its float dtype: boolean and integer
        # data (one-hot flags, pixel counts) take it, as fed to a Keras model.
        dtype = None if self.integer_inputs or type(self).build is Layer.build else self.dtype
        # One pass over the inputs and one over the tensors: every layer of a model
        # runs this on every step.
        inputs = map_structure(lambda x: _as_float(_as_tensor(x), dtype), inputs)
        shapes = map_structure(_shape, inputs)
        check_input_specs(self, shapes)  # before build, so bad input creates no weights
        if not self.built:
            self._build_once(shapes)
            check_input_specs(self, shapes)  # against the spec that build sets
        if 'training' in kwargs and not self._accepts('training'):
            del kwargs['training']
        with layer_call():  # an outermost call: the losses of earlier runs expire
            call = self.call if self.placement is None else \
                functools.partial(self.placement.call, self)
            if autocast.involved(self):
                outputs = autocast.call(self, call, inputs, args, kwargs)
            else:
                outputs = call(inputs, *args, **kwargs)
        if self.activity_regularizer is not None:
            self.add_loss([self.activity_regularizer(y) / y.shape[0] for y in flatten(outputs)])
        return outputs

    def _call_symbolic(self, inputs, kwargs):
        shapes = map_structure_tensors(lambda x: x.shape, inputs)
        check_input_specs(self, shapes)
        self._build_once(shapes)
        check_input_specs(self, shapes)
        # The inputs' masks, unless the caller gives one (Keras 2 passes them to
        # call when it takes ``mask``; a given mask=None removes them).
        kwargs = dict(kwargs)
        mask = kwargs.pop('mask') if 'mask' in kwargs else [
            getattr(x, '_keras_mask', None) for x in inputs] if isinstance(inputs, list) \
            else getattr(inputs, '_keras_mask', None)
        has_mask = any(m is not None for m in flatten(mask))
        output_masks = self._symbolic_output_masks(inputs, mask)
        with not_recording_losses():  # the default runs call on zeros: no real loss
            output_shapes = self.compute_output_shape(shapes)
        dtype = self.dtype if self.dtype.startswith('float') else config.default_dtype
        node = Node(self, inputs, kwargs, None,
                    mask=mask if has_mask and self._accepts('mask') else None)
        outputs = map_structure_shapes(lambda shape: SymbolicTensor(shape, dtype), output_shapes)
        leaves = flatten(outputs)
        if not isinstance(output_masks, list):
            output_masks = [output_masks] * len(leaves)
        for index, (tensor, output_mask) in enumerate(zip(leaves, output_masks)):
            tensor.node, tensor.index = node, index
            tensor._keras_mask = output_mask
        node.outputs = outputs
        self._inbound_nodes.append(node)
        return outputs

    def _symbolic_output_masks(self, inputs, mask):
        """``compute_mask`` on the symbolic inputs; the operation nodes it records
        are marked as computing masks, which a model replays but does not list
        among its layers (they are made again whenever the graph is)."""
        first = next_node_id()
        output_masks = self.compute_mask(inputs, mask)
        pending = [m for m in flatten(output_masks) if isinstance(m, SymbolicTensor)]
        while pending:
            node = pending.pop().node
            if node is not None and node.id > first and not node.layer.computes_mask:
                node.layer.computes_mask = True
                node.layer.integer_inputs = True  # it reads indices as they are
                pending.extend(node.parents)
        return output_masks

    def _build_once(self, shapes):
        if self.built:
            return
        self.build(shapes)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _accepts(self, argument):
        return argument in _parameters(type(self).call)

    # ----- weights -------------------------------------------------------------

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None):
        """Create, register and return a weight Tensor named ``'<layer>/<name>:0'``.

        Args:
            name: The weight's name within the layer ('kernel', 'bias').
            shape: Its shape.
            dtype: Its dtype (the layer's dtype).
            initializer: Name, instance or callable (glorot_uniform by default).
            regularizer: Penalty on the weight, added to the model's loss.
            trainable: Whether training updates it (through gradients).
            constraint: Projection applied after each optimizer update.
        """
        dtype = np.dtype(dtype or self.dtype)
        shape = tuple(int(n) for n in shape)
        initializer = initializers.get(initializer or 'glorot_uniform')
        # Checked before anything is allocated (a model built from a file's config).
        if not weight_budget.reserve(self, name, shape, dtype):
            initializer = initializers.Zeros()
        weight = initializer(shape, dtype)
        if not isinstance(weight, Tensor):
            weight = Tensor(weight, dtype=dtype)
        # C order, whatever the initializer made (Orthogonal's transpose): the memory
        # layout decides BLAS's summation order, so a freshly made weight and the same
        # values loaded from a file must share it to give the same bits.
        weight.data = weight.xp.ascontiguousarray(weight.data)
        weight.requires_grad_(trainable and self.trainable)
        weight.name = f'{self.name}/{name}:0'
        weight.constraint = constraints.get(constraint)
        autocast.flag_weight(self, weight)
        self._own_weights.append((weight, trainable))
        if regularizer is not None:
            self._regularized.append((weight, regularizers.get(regularizer)))
        return weight

    @property
    def dtype_policy(self):
        """The layer's :class:`~minidl.mixed_precision.Policy` (its ``dtype`` argument)."""
        policy = self.__dict__.get('_dtype_policy')
        if policy is None or policy.variable_dtype != self.dtype:  # dtype set after __init__
            policy = self._dtype_policy = policies.Policy(self.dtype)
        return policy

    @property
    def compute_dtype(self):
        """The dtype the layer computes in (float16 under 'mixed_float16')."""
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        """The dtype of the layer's weights: :attr:`dtype`."""
        return self.dtype

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for weight, trainable in self._own_weights:
            weight.requires_grad_(trainable and self._trainable)
        for layer in self._tracked_layers():
            layer.trainable = value

    def _tracked_layers(self):
        return self._sublayers

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        own = [weight for weight, trainable in self._own_weights if trainable]
        return own + [w for layer in self._tracked_layers() for w in layer.trainable_weights]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            own = [weight for weight, _ in self._own_weights]
            return own + [w for layer in self._tracked_layers() for w in layer.weights]
        own = [weight for weight, trainable in self._own_weights if not trainable]
        return own + [w for layer in self._tracked_layers() for w in layer.non_trainable_weights]

    @property
    def weights(self):
        """Trainable weights, then the others, as in Keras."""
        return self.trainable_weights + self.non_trainable_weights

    @property
    def losses(self):
        """Weight penalties and the terms :meth:`add_loss` added in the latest run,
        of this layer and its sublayers, as scalar Tensors."""
        penalties = [regularizer(weight) for weight, regularizer in self._regularized]
        penalties += run_losses(self)
        return penalties + [loss for layer in self._tracked_layers() for loss in layer.losses]

    def add_loss(self, losses, inputs=None):
        """Add loss terms to :attr:`losses` (Keras 2's ``add_loss``).

        Called in :meth:`call` with Tensors computed there (a KL divergence,
        an activity penalty), the terms belong to the current run: the
        outermost layer call (a model's forward pass on one batch) that is
        in progress. The next run starts afresh, so training adds exactly the
        terms of the batch it computes, each call of a shared layer counting.
        A model also takes symbolic scalars computed from its inputs, which
        it computes on each forward pass (:mod:`minidl.models.network`).

        Args:
            losses: A scalar Tensor or number, or a list of them (None adds nothing).
            inputs: The inputs the terms are conditional on, which only
                :meth:`get_losses_for` reads; every term belongs to the
                current run whatever its inputs.

        Raises:
            ValueError: For a term with more than one element.
        """
        for loss in flatten(losses):
            if loss is None:
                continue
            if isinstance(loss, SymbolicTensor):
                self._add_symbolic_loss(loss)
                continue
            loss = _as_tensor(loss)
            if loss.size != 1:
                raise ValueError(f'layer {self.name!r}: add_loss takes scalar losses, got one of '
                                 f'shape {loss.shape}; reduce it first (e.g. with its mean)')
            add_run_loss(self, loss.sum() if loss.ndim else loss, inputs_key(inputs))

    def _add_symbolic_loss(self, loss):
        raise TypeError(f'layer {self.name!r}: add_loss got the symbolic tensor {loss!r}; in '
                        f'call, add Tensors computed there, and add losses computed from a '
                        f'graph to the model (model.add_loss)')

    def flatten_layers(self):
        """This layer and every layer inside it (sublayers, a model's layers), each once.

        The order is the layer's structure, depth first, which is the same on
        every process that builds the same model (names may differ).
        """
        found, seen, pending = [], set(), [self]
        while pending:
            layer = pending.pop()
            if id(layer) not in seen:
                seen.add(id(layer))
                found.append(layer)
                pending.extend(reversed(layer._tracked_layers()))
        return found

    def named_generators(self):
        """The random generators of this layer and of every layer inside it.

        Returns:
            A list of ``('<layer name>/<attribute>', Generator)`` in
            :meth:`flatten_layers` order, each generator once.
        """
        found, seen = [], set()
        for layer in self.flatten_layers():
            for attribute, generator in layer._generators.items():
                if id(generator) not in seen:
                    seen.add(id(generator))
                    found.append((f'{layer.name}/{attribute}', generator))
        return found

    def get_weights(self):
        """Copies of the weights as numpy arrays, in :attr:`weights` order."""
        return [to_numpy(weight.data).copy() for weight in self.weights]

    def set_weights(self, weights):
        """Set the weights from numpy arrays in :attr:`weights` order (shapes must match)."""
        own = self.weights
        weights = list(weights)
        if len(weights) != len(own):
            raise ValueError(f'layer {self.name!r} has {len(own)} weights '
                             f'({", ".join(w.name for w in own) or "none"}); '
                             f'set_weights got {len(weights)} arrays')
        for weight, value in zip(own, weights):
            value = np.asarray(to_numpy(value))
            if value.dtype.kind not in 'biuf':
                # Casting would drop an imaginary part or fail on text: refuse before any change.
                raise ValueError(f'layer {self.name!r}: weight {weight.name} takes real numbers, '
                                 f'the array given has dtype {value.dtype}')
            if value.shape != weight.shape:
                raise ValueError(f'layer {self.name!r}: weight {weight.name} has shape '
                                 f'{weight.shape}, the array given has shape {value.shape}')
        for weight, value in zip(own, weights):
            weight.data[...] = weight.xp.asarray(np.asarray(to_numpy(value), weight.dtype))

    def count_params(self):
        """Number of scalars in the weights (the layer must be built)."""
        if not self.built:
            raise ValueError(f'layer {self.name!r} is not built yet, so its weights do not '
                             f'exist; call it on an input or build it first')
        return int(sum(weight.size for weight in self.weights))

    def to(self, device):
        """Move the weights to ``device`` ('cpu' or 'gpu') in place; returns self."""
        for weight in self.weights:
            weight.data = weight.to(device).data
        return self

    # ----- shapes seen in graphs -----------------------------------------------

    def _node_shapes(self, attribute):
        shapes = [map_structure_tensors(lambda t: t.shape, getattr(node, attribute))
                  for node in self._inbound_nodes]
        if not shapes:
            raise AttributeError(f'layer {self.name!r} has not been called in a graph yet')
        return shapes[0]

    @property
    def input_shape(self):
        """Shape of the input of the layer's first call in a graph."""
        return self._node_shapes('inputs')

    @property
    def output_shape(self):
        """Shape of the output of the layer's first call in a graph."""
        return self._node_shapes('outputs')

    @property
    def input(self):
        return self._inbound_nodes[0].inputs

    @property
    def output(self):
        return self._inbound_nodes[0].outputs

    def __repr__(self):
        return f'<{type(self).__name__} name={self.name!r}>'


@functools.cache
def _parameters(function):
    """Parameter names of ``function``; ``inspect.signature`` is too slow for every call."""
    return frozenset(inspect.signature(function).parameters)


def _checked_dtype(layer, dtype):
    """``dtype``'s name; a ValueError if it is not a dtype, or is not floating for a
    layer whose ``build`` makes weights (which must be floating to be trained)."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f'layer {layer.name!r}: dtype {dtype!r} is not a dtype') from None
    if dtype.kind != 'f' and type(layer).build is not Layer.build:
        raise ValueError(f'layer {layer.name!r}: dtype {dtype.name!r} is not floating, but '
                         f'{type(layer).__name__} has weights, which must be floating '
                         f"('float16', 'float32' or 'float64')")
    return dtype.name


def _as_float(tensor, dtype):
    """``tensor`` in ``dtype`` if it holds booleans or integers (and ``dtype`` is not None)."""
    if dtype is not None and tensor.data.dtype.kind in 'biu':
        return Tensor.wrap(tensor.data.astype(dtype))
    return tensor


def _as_tensor(value):
    return value if isinstance(value, Tensor) else Tensor(value)


def _shape(tensor):
    return tensor.data.shape


def map_structure_tensors(function, structure):
    """``map_structure`` over tensors and symbolic tensors; other leaves are kept."""
    return map_structure(
        lambda leaf: function(leaf) if isinstance(leaf, (Tensor, SymbolicTensor)) else leaf,
        structure)


def map_structure_shapes(function, shapes):
    """Apply ``function`` to each shape in ``shapes``: a tuple, or a list of them."""
    if isinstance(shapes, list):
        return [map_structure_shapes(function, shape) for shape in shapes]
    return function(tuple(shapes))
