"""Where fit, evaluate and predict get their batches from.

Three sources, one interface: numpy arrays (batched, and shuffled each epoch
with the model's own generator), a ``Sequence`` (one item per batch, in shuffled
order if asked) or a plain generator (``steps`` batches per epoch). Each
yields :class:`Batch` objects; ``Batch.indices`` names the batch's samples
within ``Batch.arrays``, so that a :class:`~minidl.models.strategy.Strategy`
can hand each process its part of a global batch.

Which feed a call gets is decided in one place, from the kind of its data
(:func:`minidl.models.intake.kind_of`).
"""

import math

import numpy as np

from minidl.compute import to_numpy
from minidl.data import batch_indices
from minidl.models.strategy import count_of
from minidl.tensor import Tensor


class Batch:
    """Inputs, targets and sample weights of one global batch.

    Attributes:
        x: List of input arrays (one per model input).
        y: List of target arrays (one per model output), or None.
        sample_weight: Per-sample weights for every output, a list with one
            entry (weights or None) per output with a loss, or None.
        indices: The batch's samples in the arrays (int array or slice).
    """

    def __init__(self, x, y, sample_weight, indices):
        self.x, self.y, self.sample_weight, self.indices = x, y, sample_weight, indices

    def __len__(self):
        return count_of(self.indices)

    def take(self, indices, device=None):
        """The arrays of the samples ``indices`` (a subset of this batch's).

        Args:
            indices: Samples of this batch (int array or slice).
            device: The Device of the model's weights. On a GPU the samples
                are moved there as Tensors, so that a model on the GPU takes
                numpy data as Keras users give it; elsewhere they are
                returned as they are.
        """
        to_gpu = device is not None and device.kind == 'gpu'

        def pick(array):
            data = array.data if isinstance(array, Tensor) else array
            if to_gpu:
                return Tensor(data[indices], device=device)
            return Tensor.wrap(data[indices]) if isinstance(array, Tensor) else data[indices]
        y = None if self.y is None else [pick(a) for a in self.y]
        weight = self.sample_weight
        if isinstance(weight, list):  # one entry per output with a loss
            weight = [None if w is None else pick(w) for w in weight]
        elif weight is not None:
            weight = pick(weight)
        return [pick(a) for a in self.x], y, weight


class ArrayFeed:
    """Batches of ``batch_size`` samples from arrays of equal length."""

    check_batches = False  # the arrays are checked once, before the first epoch

    def __init__(self, x, y, sample_weight, batch_size, shuffle=False, generator=None):
        self.x, self.y, self.sample_weight = x, y, sample_weight
        self.count = len(x[0])
        self.batch_size, self.shuffle, self.generator = batch_size, shuffle, generator
        self.steps = math.ceil(self.count / batch_size)

    def epoch(self):
        # The permutation is drawn when the epoch starts, from the model's
        # generator, whose state a full-model checkpoint saves.
        for indices in batch_indices(self.count, self.batch_size, self.shuffle, self.generator):
            yield Batch(self.x, self.y, self.sample_weight, indices)


class SequenceFeed:
    """One batch per item of a ``Sequence``, in shuffled order if asked."""

    check_batches = True
    batch_size = None  # whatever each item holds

    def __init__(self, sequence, steps=None, shuffle=False, generator=None, names=(None, None)):
        self.sequence, self.shuffle, self.generator = sequence, shuffle, generator
        self.steps = len(sequence) if steps is None else min(steps, len(sequence))
        self.names = names

    def epoch(self):
        order = (to_numpy(self.generator.permutation(len(self.sequence)))
                 if self.shuffle else np.arange(len(self.sequence)))
        for index in order[:self.steps]:
            yield batch_of(self.sequence[int(index)], self.names)
        self.sequence.on_epoch_end()


class GeneratorFeed:
    """``steps`` batches per epoch from an iterator yielding ``(x, y[, sample_weight])``."""

    check_batches = True
    batch_size = None  # whatever each item holds

    def __init__(self, iterator, steps, names=(None, None)):
        self.iterator, self.steps, self.names = iter(iterator), steps, names

    def epoch(self):
        count = 0
        while self.steps is None or count < self.steps:
            try:
                item = next(self.iterator)
            except StopIteration:
                if self.steps is not None:
                    raise ValueError(f'the generator stopped after {count} batches; '
                                     f'{self.steps} were expected per epoch') from None
                return
            count += 1
            yield batch_of(item, self.names)


def batch_of(item, names=(None, None)):
    """A Batch from a ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` item.

    ``names`` are the model's input names and the names of its outputs with a
    loss, for an ``x`` or ``y`` given as a dict by name (:func:`by_name`).
    """
    if not isinstance(item, tuple):
        item = (item,)
    if not 1 <= len(item) <= 3:
        raise ValueError(f'a batch must be (x,), (x, y) or (x, y, sample_weight); '
                         f'got a tuple of {len(item)} items')
    x, y, weight = (tuple(item) + (None, None))[:3]
    x = as_list(by_name(x, names[0], 'x'))
    y = None if y is None else as_list(by_name(y, names[1], 'y'))
    return Batch(x, y, weight, slice(0, len(x[0])))


def by_name(data, names, what):
    """``data`` as it is, or, for a dict, its values for ``names`` in that order.

    As in Keras 2.2.4, keys the model has no use for are left out (Keras's
    image_ocr example passes its source strings along with the inputs), and a
    missing name is an error.
    """
    if not isinstance(data, dict):
        return data
    if names is None:
        raise ValueError(f'{what} given by name, but this model has no named '
                         f'inputs/outputs')
    missing = [name for name in names if name not in data]
    if missing:
        raise ValueError(f'no data given for {missing} in {what}; {what} by name needs each of '
                         f'{names}, got {sorted(data)}')
    return [data[name] for name in names]


def as_list(data):
    """A list of arrays from an array, a Tensor, or a list/tuple of them."""
    if isinstance(data, (list, tuple)):
        return [item if isinstance(item, Tensor) else np.asarray(item) for item in data]
    return [data if isinstance(data, Tensor) else np.asarray(data)]

