"""Sequence: a data set that hands out whole batches by index (Keras's utils.Sequence)."""


class Sequence:
    """Base class for batch-indexed data, for data that does not fit in memory.

    Subclasses define ``__getitem__(index)``, returning batch ``index`` as
    ``(x, y)`` or ``(x, y, sample_weight)``, and ``__len__``, the number of
    batches per epoch. ``fit`` calls ``on_epoch_end`` after each epoch; with
    ``shuffle=True`` it visits the batches in an order drawn from minidl's
    default generator. Example::

        class Batches(minidl.utils.Sequence):
            def __init__(self, x, y, batch_size):
                self.x, self.y, self.batch_size = x, y, batch_size

            def __len__(self):
                return math.ceil(len(self.x) / self.batch_size)

            def __getitem__(self, index):
                part = slice(index * self.batch_size, (index + 1) * self.batch_size)
                return self.x[part], self.y[part]
    """

    def __getitem__(self, index):
        raise NotImplementedError(f'{type(self).__name__} must define __getitem__(index)')

    def __len__(self):
        raise NotImplementedError(f'{type(self).__name__} must define __len__()')

    def on_epoch_end(self):
        """Called after each epoch (e.g. to reshuffle the samples between batches)."""

    def __iter__(self):
        """The batches in order, once each."""
        for index in range(len(self)):
            yield self[index]
