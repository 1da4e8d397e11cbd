"""The Embedding layer (Keras 2): integer indices to dense vectors."""

import numpy as np

from minidl import constraints, initializers, regularizers
from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.masking import nonzero_mask
from minidl.layers.conv import serialize_or_none
from minidl.tensor import Tensor


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f'Embedding: {name} must be a positive int, got {value!r}')
    return int(value)


class Embedding(Layer):
    """Maps each index in ``[0, input_dim)`` to a row of a trainable matrix.

    Inputs are integers of any shape, (batch, steps) typically; the output
    has one more axis of size ``output_dim``. Floating inputs that hold whole
    numbers are accepted (Keras casts them); any other value, and indices
    outside ``[0, input_dim)``, raise a ValueError.

    With ``mask_zero=True`` index 0 is padding: the output carries a mask
    that is False where the index is 0 (:mod:`minidl.layers.masking`), which
    the layers after it respect; the vocabulary's real words then start at
    1, so ``input_dim`` counts the padding index too, as in Keras 2.

    Args:
        input_dim: Size of the vocabulary (largest index + 1).
        output_dim: Size of each embedding vector.
        embeddings_initializer: Initializer of the ``(input_dim, output_dim)``
            weight 'embeddings'.
        embeddings_regularizer, activity_regularizer: Penalties.
        embeddings_constraint: Projection applied after updates.
        mask_zero: Whether index 0 is padding, to be masked (see above).
        input_length: Length of the input sequences (an int, or a tuple for
            inputs of several axes), when fixed; it sets the layer's input
            shape, so an Embedding can start a Sequential model.
    """

    integer_inputs = True

    def __init__(self, input_dim, output_dim, embeddings_initializer='uniform',
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, input_length=None, **kwargs):
        input_dim = _positive_int(input_dim, 'input_dim')
        output_dim = _positive_int(output_dim, 'output_dim')
        lengths = None
        if input_length is not None:
            lengths = tuple(input_length) if isinstance(input_length, (list, tuple)) \
                else (input_length,)
            if not lengths or not all(length is None or isinstance(length, (int, np.integer))
                                      and not isinstance(length, bool) and length > 0
                                      for length in lengths):
                raise ValueError(f'Embedding: input_length must be a positive int (or a tuple '
                                 f'of them and None), got {input_length!r}')
        embeddings_initializer = initializers.get(embeddings_initializer)
        embeddings_regularizer = regularizers.get(embeddings_regularizer)
        embeddings_constraint = constraints.get(embeddings_constraint)
        if lengths is not None and 'input_shape' not in kwargs \
                and kwargs.get('batch_input_shape') is None:
            kwargs['input_shape'] = lengths
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = bool(mask_zero)
        self.input_length = input_length
        self._lengths = lengths

    def build(self, input_shape):
        self.embeddings = self.add_weight('embeddings', (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def compute_mask(self, inputs, mask=None):
        return nonzero_mask(inputs) if self.mask_zero else None

    def call(self, inputs):
        indices = inputs.data
        if indices.dtype.kind == 'f':
            if not bool(inputs.xp.all(indices == inputs.xp.trunc(indices))):
                raise ValueError(f'layer {self.name!r} needs integer indices; its floating '
                                 f'input holds values that are not whole numbers')
            indices = indices.astype(np.int64)
        elif indices.dtype.kind not in 'iu':
            raise TypeError(f'layer {self.name!r} needs integer indices, got dtype '
                            f'{indices.dtype}')
        try:
            return F.embedding(Tensor(indices, device=self.embeddings.device), self.embeddings)
        except ValueError as error:
            raise ValueError(f'layer {self.name!r}: {error}') from None

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self._lengths is None:
            return input_shape + (self.output_dim,)
        if len(self._lengths) != len(input_shape) - 1:
            raise ValueError(f'layer {self.name!r}: input_length={self.input_length!r} does not '
                             f'fit inputs of shape {input_shape}')
        lengths = []
        for expected, found in zip(self._lengths, input_shape[1:]):
            if expected is not None and found is not None and expected != found:
                raise ValueError(f'layer {self.name!r}: input_length={self.input_length!r} '
                                 f'does not match inputs of shape {input_shape}')
            lengths.append(found if expected is None else expected)
        return (input_shape[0],) + tuple(lengths) + (self.output_dim,)

    def get_config(self):
        config = super().get_config()
        config.update({
            'input_dim': self.input_dim,
            'output_dim': self.output_dim,
            'embeddings_initializer': initializers.serialize(self.embeddings_initializer),
            'embeddings_regularizer': serialize_or_none(regularizers,
                                                        self.embeddings_regularizer),
            'activity_regularizer': serialize_or_none(regularizers, self.activity_regularizer),
            'embeddings_constraint': serialize_or_none(constraints, self.embeddings_constraint),
            'mask_zero': self.mask_zero,
            'input_length': self.input_length,
        })
        return config
