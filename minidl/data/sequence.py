"""Sequence: a data set that hands out whole batches by index (Keras's utils.Sequence)."""


class Sequence:
    """Base class for batch-indexed data.

    Subclasses define ``__getitem__(index)``, returning the batch
    ``(x, y)`` or ``(x, y, sample_weight)``, and ``__len__`` (the number of
    batches). ``fit`` calls ``on_epoch_end`` after each epoch; with
    ``shuffle=True`` it visits the batches in an order drawn from minidl's
    default generator.
    """

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        """Called after each epoch (e.g. to reshuffle samples between batches)."""

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]
