"""The training loop's one extension point: how work spreads over processes.

``fit``, ``evaluate`` and ``predict`` ask a :class:`Strategy` every question
whose answer changes when the work is shared between processes: which samples
of a global batch this process computes, how gradients and metric sums are
combined, how predictions are put back in order, and who prints and writes
files. The default answers are those of a single process. A distributed
package (``minidl_dist``) supplies its own Strategy through the optimizer
given to ``compile`` (``optimizer.strategy``); minidl itself never imports it.

The contract, step by step, for one global batch of ``fit``:

1. ``run_step(step, indices)`` calls ``step(local)`` for the part
   of ``indices`` this process computes (``shard``; a distributed strategy
   skips an empty part). ``step`` clears the gradients, runs forward and
   backward with the loss scaled so that the gradients of all parts add up
   to the gradient of the global batch's mean loss, and adds the part's
   losses and metric values to the running sums. A strategy may call
   ``step`` several times (micro-shards), keeping and combining the
   gradients between calls.
2. ``reduce_gradients(params)`` makes each ``param.grad`` the sum over
   processes (the same bits on every process).
3. The optimizer updates the weights, identically everywhere.
4. ``reduce_sum(totals)`` sums the loss and metric accumulators, so that
   logs, callbacks and ``History`` see exact values over the whole data.

``compile`` calls ``attach(model)`` (a strategy may place layers on processes
then, e.g. shard their weights: ``Layer.placement``). Whatever reads or
writes the model's weights as a whole (``get_weights``, ``set_weights``,
``save``, ``save_weights``, ``load_weights``, ``summary``, ``count_params``)
runs inside ``whole_weights(model)``, where every layer holds its complete
weights, on every process.

Before its first epoch ``fit`` calls ``begin_epochs(batch_size, steps, samples)``,
after each epoch's last step ``end_epoch()``, and after its last epoch ``end_epochs()``.
``evaluate`` and ``predict`` compute nothing for an empty part of a batch
(a batch smaller than the number of processes), and ``gather`` then
receives None.
"""

import contextlib

import numpy as np


class Strategy:
    """One process does everything: the default strategy."""

    #: Whether this process prints progress and writes files.
    is_chief = True

    def attach(self, model):
        """Called by ``model.compile`` once the optimizer and losses are set.

        Raises:
            ValueError: If another strategy placed the model's layers: its
                weights are that strategy's shards (save the model and load
                it to use it otherwise).
        """
        placed = [layer.name for layer in model.flatten_layers() if layer.placement is not None]
        if placed:
            raise ValueError(f'model {model.name!r} was placed over processes when it was '
                             f'compiled before (layers {placed}); its weights are shards. '
                             f'Save it and load the file to compile it another way')

    def whole_weights(self, model):
        """A context in which every layer of ``model`` holds its complete weights.

        Changes made to them inside the block are kept.
        """
        return contextlib.nullcontext()

    def begin(self, model):
        """Called when fit, evaluate or predict starts, and before a model's first
        ``train_on_batch``, ``test_on_batch`` or ``predict_on_batch`` (e.g. to
        broadcast the weights)."""

    def begin_epochs(self, batch_size, steps, samples=None):
        """Called by fit before the first epoch.

        Args:
            batch_size: The global batch size of array data; None when the
                batches come from a generator or a Sequence.
            steps: Batches per epoch (None if unknown).
            samples: Number of samples of array data; None otherwise.
        """

    def shard(self, indices):
        """The part of a global batch's sample ``indices`` this process computes.

        ``indices`` is an int array or a slice; the result is of the same kind.
        """
        return indices

    def run_step(self, step, indices):
        """Compute this process's gradients for the global batch ``indices``."""
        step(self.shard(indices))

    def reduce_gradients(self, params):
        """Make every ``param.grad`` the sum of its values over processes."""

    def reduce_sum(self, totals):
        """Sum a float64 vector of accumulators over processes."""
        return totals

    def end_epoch(self):
        """Called by fit after an epoch's last step, before validation and the
        epoch's callbacks (e.g. to make processes that train apart hold one
        model again)."""

    def end_epochs(self):
        """Called by fit after its last epoch (not when an exception ends it)."""

    def gather(self, arrays):
        """Concatenate the processes' lists of local arrays along axis 0, in shard order.

        ``arrays`` holds one array per model output, or is None when this
        process computed nothing for the batch; the result is the list of
        concatenated arrays.
        """
        return arrays

    def share(self, local_count, global_count):
        """Fraction of the global batch computed by a part of ``local_count`` samples.

        Per-batch terms that do not come from samples (weight penalties) are
        added to each part's loss scaled by it, so they count once in total.
        """
        return local_count / global_count if global_count else 1.0


def count_of(indices):
    """Number of samples an index array or slice selects."""
    if isinstance(indices, slice):
        return len(range(*indices.indices(indices.stop)))
    return int(np.size(indices))
