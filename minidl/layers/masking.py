"""Masks, Keras 2's way: which time steps of a padded sequence are real.

A mask is a boolean array ``(batch, steps)`` (True where a step holds data)
that travels beside a layer's output through a functional graph. It starts
at a layer whose ``compute_mask`` makes one (``Embedding(mask_zero=True)``,
:class:`Masking`), passes through the layers whose ``supports_masking`` is
True (Dense, Dropout, activations, TimeDistributed, ...), is combined by the
merge layers, and is consumed by the layers whose ``call`` takes ``mask``:
the recurrent layers carry their states over masked steps, global average
pooling averages the unmasked ones only, and a model's loss and metrics weigh
each output step by its mask.

In a graph, masks are symbolic tensors like any other: calling a layer on
symbolic tensors computes its output mask with ``compute_mask`` on the
symbolic inputs (recording operation nodes where the mask is new) and sets it
as each output's ``_keras_mask``; the node keeps the input mask it passes to
``call`` (:attr:`~minidl.layers.symbolic.Node.mask`), so replaying the graph
computes masks with the layers' outputs, in the same pass. A layer called on
arrays directly takes a mask only through its ``mask`` argument.
"""

from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.operation import recordable
from minidl.tensor import Tensor


@recordable
def nonzero_mask(x):
    """``x != 0`` (Embedding's mask of its indices)."""
    return Tensor._wrap(x.data != 0) if isinstance(x, Tensor) else Tensor(x) != 0


@recordable
def steps_differing_from(x, value):
    """Where any feature of a step differs from ``value``: ``(batch, steps, ...)`` ->
    ``(batch, steps)``."""
    return Tensor._wrap(x.xp.any(x.data != value, axis=-1))


@recordable
def all_masks(masks):
    """The steps unmasked in every one of ``masks`` (boolean arrays of one shape)."""
    result = masks[0].data
    for mask in masks[1:]:
        result = result & mask.data
    return Tensor._wrap(result)


@recordable
def concatenated_mask(inputs, masks, axis):
    """The mask of ``Concatenate(axis)``'s output, Keras 2's rule.

    Each input's mask (all True for an input without one) gets a trailing
    axis of size 1, the masks are concatenated along ``axis`` as their inputs
    are, and an output step is unmasked where every mask joined into it is:
    an AND across the inputs for features joined on the last axis, the masks
    end to end for sequences joined in time.
    """
    xp = inputs[0].xp
    parts = [(xp.ones(x.shape[:-1], bool) if mask is None else mask.data.astype(bool))[..., None]
             for x, mask in zip(inputs, masks)]
    return Tensor._wrap(xp.concatenate(parts, axis=axis).all(axis=-1))


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``.

    The output is the input with those steps set to zero, and the mask
    (True where some feature differs from ``mask_value``) goes on to the
    layers after it, as in Keras 2.

    Args:
        mask_value: The value that marks padding.
    """

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return steps_differing_from(inputs, self.mask_value)

    def call(self, inputs):
        keep = Tensor._wrap(inputs.xp.any(inputs.data != self.mask_value, axis=-1,
                                          keepdims=True).astype(inputs.dtype))
        return inputs * keep

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config['mask_value'] = self.mask_value
        return config


def masked_average(inputs, mask, axis, keepdims=False):
    """Mean of ``inputs`` over the unmasked steps along ``axis`` (Keras 2's
    GlobalAveragePooling1D with a mask); a sample with no unmasked step gives 0."""
    weights = mask.data if isinstance(mask, Tensor) else inputs.xp.asarray(mask)
    shape = [1] * inputs.ndim
    shape[0], shape[axis] = inputs.shape[0], inputs.shape[axis]
    weights = weights.astype(inputs.dtype).reshape(shape)
    counts = inputs.xp.maximum(weights.sum(axis=axis, keepdims=keepdims), 1)
    return F.sum(inputs * Tensor._wrap(weights), axis=axis, keepdims=keepdims) / \
        Tensor._wrap(counts)
