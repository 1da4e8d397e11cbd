"""Embedding lookup: rows of a weight matrix selected by integer indices."""

from minidl.functions.scatter import index_add
from minidl.tensor import Function


class Embedding(Function):
    """``weights[indices]``; the weights' gradient sums the rows of repeated indices."""

    def forward(self, indices, weights):
        if indices.dtype.kind not in 'iu':
            raise TypeError(f'embedding needs integer indices, got dtype {indices.dtype}')
        if weights.ndim != 2:
            raise ValueError(f'embedding needs weights of shape (vocabulary, dimension), '
                             f'got shape {weights.shape}')
        vocabulary = weights.shape[0]
        if indices.size:
            low, high = int(indices.min()), int(indices.max())
            if low < 0 or high >= vocabulary:
                raise ValueError(f'embedding: indices must lie in [0, {vocabulary}) for a '
                                 f'vocabulary of {vocabulary}, got values from {low} to {high}')
        self.indices, self.vocabulary = indices, vocabulary
        return self.xp.take(weights, indices, axis=0)

    def backward(self, grad):
        return None, index_add(self.indices, grad, self.vocabulary)


def embedding(indices, weights):
    """Look up rows of ``weights`` (the ``(V, D)`` embedding matrix) by index.

    Args:
        indices: Integer tensor of any shape, with entries in ``[0, V)``.
        weights: Tensor of shape ``(V, D)``.

    Returns:
        A tensor of shape ``indices.shape + (D,)``.

    Raises:
        TypeError: If ``indices`` are not integers.
        ValueError: If ``weights`` is not 2-D or an index is out of range.
    """
    return Embedding()(indices, weights)
