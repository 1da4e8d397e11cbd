"""The casts a mixed precision policy makes around a layer's call (tf.keras's autocasting).

A layer whose policy is 'mixed_float16' keeps float32 weights and computes in
float16: its call gets its floating inputs cast to float16, and every read of
one of its weights by an operation inside the call gets a float16 copy. The
copies are made by a recorded :class:`~minidl.functions.array.Cast`, whose
backward casts the gradient back, so the float32 master weight receives a
float32 gradient. Each weight is cast once per outermost call (a recurrent
layer reads its kernel at every step), through the :class:`Scope` that
``minidl.tensor.Function`` consults in ``config.per_thread.autocast``: one
attribute read per operation when no mixed layer runs. The scope is per
thread, so a ``predict`` in one thread never sees another's casts.

Two exceptions, as in tf.keras: layers with ``keeps_float32`` (batch and
layer normalization, whose statistics need float32's range) compute in
float32 and return float16; and a model's float16 outputs are cast to its
float32, so that losses, metrics and ``predict`` work in float32 (tf.keras
leaves that to a float32 last layer, which works here too).
"""

import numpy as np

from minidl import config
from minidl.functions.array import Cast
from minidl.layers.nest import map_structure
from minidl.tensor import Tensor

_per_thread = config.per_thread


class Scope:
    """The casts of one outermost mixed call: weights flagged ``autocast`` that an
    operation reads are replaced by copies in ``dtype``, made once per weight."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        # (id(weight), recording) -> (weight, its cast): the weight is kept so that
        # its id stays its own; a cast made without recording has no graph, so the
        # two kinds are kept apart.
        self._casts = {}

    def cast_weights(self, inputs, data):
        """``inputs`` and their arrays ``data`` with each flagged weight replaced by its cast."""
        if not any([getattr(x, 'autocast', False) for x in inputs]):
            return inputs, data
        inputs, data = list(inputs), list(data)
        for index, tensor in enumerate(inputs):
            if getattr(tensor, 'autocast', False) and tensor.data.dtype != self.dtype:
                key = (id(tensor), _per_thread.grad_enabled)
                if key not in self._casts:
                    self._casts[key] = (tensor, _cast(tensor, self.dtype))
                inputs[index] = self._casts[key][1]
                data[index] = inputs[index].data
        return tuple(inputs), data


def active():
    """Whether the current thread is inside a mixed precision layer's call."""
    return _per_thread.autocast is not None


def involved(layer):
    """Whether a call of ``layer`` goes through :func:`call`: it is mixed, a mixed call is
    in progress, or its float16 outputs leave in float32 (a model's)."""
    return _per_thread.autocast is not None or layer.dtype_policy.is_mixed \
        or layer.float32_outputs


def flag_weight(layer, weight):
    """Mark ``weight``, just made by ``layer``, to be cast in the layer's calls when the
    layer's policy is mixed (floating weights of layers without ``keeps_float32``)."""
    policy = layer.dtype_policy
    if policy.is_mixed and not layer.keeps_float32 and weight.dtype.kind == 'f':
        weight.autocast = True


def call(layer, run, inputs, args, kwargs):
    """``run(inputs, *args, **kwargs)`` (the layer's call) with the casts its policy asks for.

    Floating inputs are cast to the dtype the layer computes in: its compute
    dtype, or float32 for a mixed layer that ``keeps_float32``, whose outputs
    are then cast to its compute dtype. Inside a mixed call a Scope casts the
    layer's weights. A layer that is not mixed, called inside a mixed call,
    gets its inputs cast to its own dtype and computes without the scope.
    """
    policy = layer.dtype_policy
    mixed = policy.is_mixed
    if not mixed and _per_thread.autocast is None:  # a model outside mixed calls
        return _model_outputs(layer, run(inputs, *args, **kwargs), policy)
    inside = policy.variable_dtype if mixed and layer.keeps_float32 else policy.compute_dtype
    previous = _per_thread.autocast
    scope = None
    if mixed and inside == policy.compute_dtype:
        same = previous is not None and previous.dtype == np.dtype(inside)
        scope = previous if same else Scope(inside)
    inputs = cast_floats(inputs, inside)
    _per_thread.autocast = scope
    try:
        outputs = run(inputs, *args, **kwargs)
    finally:
        _per_thread.autocast = previous
    if mixed and inside != policy.compute_dtype:
        return cast_floats(outputs, policy.compute_dtype)
    return _model_outputs(layer, outputs, policy)


def _model_outputs(layer, outputs, policy):
    """A model's float16 outputs in its own wider dtype (float32), whatever its policy:
    a model loaded without the global policy, or made of layers given 'mixed_float16'
    one by one, is not mixed itself, and its loss must not be computed in float16 (the
    loss scale alone would overflow it)."""
    if not layer.float32_outputs:
        return outputs
    wide = np.dtype(policy.variable_dtype)
    if wide.kind != 'f':
        return outputs
    return map_structure(lambda y: cast_floats(y, wide) if isinstance(y, Tensor) and
                         y.data.dtype.kind == 'f' and y.data.dtype.itemsize < wide.itemsize
                         else y, outputs)


def cast_floats(structure, dtype):
    """Every floating Tensor of ``structure`` in ``dtype`` (a recorded Cast; masks kept)."""
    dtype = np.dtype(dtype)
    if dtype.kind != 'f':
        return structure

    def cast(leaf):
        if not isinstance(leaf, Tensor) or leaf.data.dtype.kind != 'f' \
                or leaf.data.dtype == dtype:
            return leaf
        cast_leaf = _cast(leaf, dtype)
        mask = getattr(leaf, '_keras_mask', None)
        if mask is not None:
            cast_leaf._keras_mask = mask
        return cast_leaf

    return map_structure(cast, structure)


def _cast(tensor, dtype):
    previous = _per_thread.autocast
    _per_thread.autocast = None  # the cast itself reads the weight as it is
    try:
        return Cast(dtype)(tensor)
    finally:
        _per_thread.autocast = previous

