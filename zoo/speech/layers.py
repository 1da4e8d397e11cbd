"""Utterance lengths in a padded batch, and the mask they make for the Deep Speech models.

A padded batch of features ``(batch, frames, features)`` holds each
utterance's frames first and exact zero rows after them; a real frame is a
normalised feature vector, never all zero. The length ``L`` of an utterance
is therefore its count of non-zero frames. Convolutions over time shorten
sequences; :func:`output_lengths` says by how much, and :class:`FrameMask`
zeroes and masks the frames past those lengths, so that what follows (the
next convolution, the recurrent layers, the loss) never sees padding.
"""

import numpy as np

from minidl import activations, functions as F
from minidl.compute import to_numpy
from minidl.layers import Layer
from minidl.layers.operation import recordable
from minidl.tensor import Tensor

# Deep Speech 2's convolutions along time (Amodei et al. 2016, §3.5): kernel 11,
# stride 2 for the first and 1 for the others, with 5 zero frames padded on each
# side. Only these enter the lengths; the frequency axis has no padding frames.
TIME_KERNEL = 11
TIME_PADDING = 5
TIME_STRIDES = (2, 1, 1)


def output_lengths(input_lengths, conv_layers=2):
    """Frames after the convolutions of a Deep Speech 2 model with ``conv_layers`` layers.

    Each convolution maps ``L`` frames to ``(L + 2 * 5 - 11) // stride + 1``,
    with stride 2 for the first layer and 1 after it; so ``(L + 1) // 2``
    (``ceil(L / 2)``) for any ``conv_layers >= 1``. ``conv_layers=0`` is the
    identity: the lengths of :func:`zoo.speech.deepspeech.DeepSpeech`, whose
    outputs are one per input frame.

    Args:
        input_lengths: Frames of each utterance (ints >= 1).
        conv_layers: Number of convolutions (0 to 3).

    Returns:
        A numpy int64 array of the shape of ``input_lengths``.
    """
    if conv_layers not in range(len(TIME_STRIDES) + 1):
        raise ValueError(f'output_lengths: conv_layers must be 0 to {len(TIME_STRIDES)}, got '
                         f'{conv_layers!r}')
    lengths = np.asarray(input_lengths, dtype=np.int64)
    for stride in TIME_STRIDES[:conv_layers]:
        lengths = (lengths + 2 * TIME_PADDING - TIME_KERNEL) // stride + 1
    return lengths


def _frame_mask(sequence, features, conv_layers):
    """``(batch, sequence frames)`` booleans: True on the first output_lengths(L) frames."""
    xp = features.xp
    input_lengths = xp.any(features.data != 0, axis=-1).sum(axis=1)
    lengths = xp.asarray(output_lengths(to_numpy(input_lengths), conv_layers))
    return xp.arange(sequence.shape[1])[None, :] < lengths[:, None]


@recordable
def frame_mask(sequence, features, conv_layers):
    """The mask of :class:`FrameMask` as a Tensor (recorded in a graph on symbolic tensors)."""
    return Tensor.wrap(_frame_mask(sequence, features, conv_layers))


class FrameMask(Layer):
    """Zeroes the frames of a sequence past each utterance's length, and masks them.

    Called on ``[sequence, features]``: ``sequence`` is ``(batch, frames',
    ...)``, computed from the model's input ``features`` ``(batch, frames,
    input_dim)`` by ``conv_layers`` Deep Speech 2 convolutions. Frame ``t``
    of utterance ``i`` is kept where ``t < output_lengths(L_i,
    conv_layers)``, ``L_i`` being its count of non-zero feature frames; the
    other frames become zero, so a convolution after this layer sees the
    same zeros as its own padding would give. With ``attach_mask`` the
    output carries that mask (Keras 2's ``_keras_mask``) for the recurrent
    layers and the loss; without it (before a convolution, which refuses
    masks) it carries none.

    Args:
        conv_layers: Convolutions between ``features`` and ``sequence`` (0 to 3).
        attach_mask: Whether the output carries the mask.
    """

    def __init__(self, conv_layers=0, attach_mask=True, **kwargs):
        super().__init__(**kwargs)
        output_lengths(1, conv_layers)  # checks conv_layers
        self.conv_layers = conv_layers
        self.attach_mask = bool(attach_mask)

    def call(self, inputs):
        sequence, features = self._split(inputs)
        keep = _frame_mask(sequence, features, self.conv_layers).astype(sequence.dtype)
        keep = keep.reshape(keep.shape + (1,) * (sequence.ndim - 2))
        return sequence * Tensor.wrap(keep)

    def compute_mask(self, inputs, mask=None):
        if not self.attach_mask:
            return None
        sequence, features = self._split(inputs)
        return frame_mask(sequence, features, self.conv_layers)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])

    def _split(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError(f'layer {self.name!r} (FrameMask) takes [sequence, features], got '
                             f'{inputs!r:.200}')
        sequence, features = inputs
        if len(features.shape) != 3 or len(sequence.shape) < 3 or \
                (sequence.shape[0] is not None and features.shape[0] is not None
                 and sequence.shape[0] != features.shape[0]):
            raise ValueError(f'layer {self.name!r} (FrameMask): sequence (batch, frames, ...) '
                             f'and features (batch, frames, input_dim) needed, got shapes '
                             f'{tuple(sequence.shape)} and {tuple(features.shape)}')
        return sequence, features

    def get_config(self):
        config = super().get_config()
        config.update(conv_layers=self.conv_layers, attach_mask=self.attach_mask)
        return config


class ClippedReLU:
    """``min(max(x, 0), max_value)``, an activation that serialises with its cap.

    Deep Speech's recurrent layer uses it; as a named object it can be saved
    in a model's configuration, unlike a closure.

    Args:
        max_value: The cap (> 0).
    """

    def __init__(self, max_value=20.0):
        if not max_value > 0:
            raise ValueError(f'ClippedReLU: max_value must be positive, got {max_value!r}')
        self.max_value = float(max_value)
        self.__name__ = 'clipped_relu'

    def __call__(self, x):
        return F.clip(F.relu(x), 0.0, self.max_value)

    def get_config(self):
        return {'max_value': self.max_value}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


# load_model builds only registered classes: importing the zoo registers these beside
# minidl's own, so a saved Deep Speech model loads with no custom_objects (and the
# user's custom objects stay the user's).
Layer.registry.register(FrameMask)
activations.REGISTRY.register(ClippedReLU)
