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

from minidl.functions import masks
from minidl.layers.base import Layer
from minidl.layers.operation import recordable

# The mask arithmetic is in minidl.functions.masks; these record it in a graph.
nonzero_mask = recordable(masks.nonzero_mask)
steps_differing_from = recordable(masks.steps_differing_from)
all_masks = recordable(masks.all_masks)
concatenated_mask = recordable(masks.concatenated_mask)


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
        return inputs * masks.steps_differing_from(inputs, self.mask_value, keepdims=True,
                                                   dtype=inputs.dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config['mask_value'] = self.mask_value
        return config
