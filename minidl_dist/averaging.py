"""Model averaging: every rank trains alone, and the ranks' models are averaged now and then.

Synchronous data parallelism (:class:`~minidl_dist.strategy.DataParallel`)
sums the gradients over the ranks at every step. Periodic model averaging
(Su et al. 2015) lets every rank take ``period`` optimizer steps on its own
shard of each global batch, with its own optimizer, and only then averages
the models: the traffic of one step spread over ``period`` steps. The price
is staleness: between two averages the ranks drift apart, each following
the gradients of fewer samples, which can cost accuracy as ``period`` grows.

What is averaged, with the fixed-order allreduce (a sum in a fixed tree,
then a division by the number of ranks, so every rank holds the same bits):

- the trainable weights;
- the state weights (:func:`~minidl_dist.model_parts.state_weights`: batch
  normalization's moving statistics, which each rank updates from its own
  shard);
- the optimizer's per-weight slots (momentum, Adam's moments), so that the
  ranks keep one optimizer: each period starts from the same velocity on
  every rank instead of each rank drifting on its own, the Adam family's
  step sizes come from one set of moments, and the optimizer state rank 0
  saves in a checkpoint is the job's (a resumed run continues it). The step
  count and the shared scalar state (Nadam's momentum cache) depend only
  on the number of steps, which is the same on every rank, so they are kept.

With ``period=1`` and SGD, with or without momentum, the mean of the ranks'
updates is the synchronous update, as SGD's update is linear in the
gradient and the velocity: only the rounding differs. Adam's is not linear
(it divides by the root of the second moment), so there ``period=1`` is
close to, not equal to, synchronous training.

The models are averaged every ``period`` steps and after each epoch's last
step, so that validation, callbacks at the epoch's end, ``evaluate`` and
``save`` see one model.
"""

import numbers

import numpy as np

from minidl import Tensor, optimizers
from minidl.models.strategy import count_of
from minidl_dist import comm, model_parts
from minidl_dist.allreduce import BUCKET_BYTES, Reducer
from minidl_dist.comm import from_host, to_host
from minidl_dist.failfast import doing
from minidl_dist.local_step import train_alone
from minidl_dist.strategy import DataParallel


def ModelAveraging(optimizer, period, bucket_bytes=BUCKET_BYTES,  # noqa: N802 (a class-like name)
                   every_rank_writes=False):
    """Make ``model.compile(optimizer=...)`` train with periodic model averaging.

    Each rank trains on its shard of every global batch (``fit``'s
    ``batch_size`` is the global batch, as with
    :func:`~minidl_dist.DistributedOptimizer`) with its own copy of the
    optimizer; weights, moving statistics and optimizer slots are averaged
    over the ranks every ``period`` steps and at the end of each epoch.

    Args:
        optimizer: Any minidl optimizer (an instance or a name such as 'sgd').
        period: Optimizer steps between two averages, a positive integer.
            1 averages after every step (with SGD, the same as synchronous
            data parallelism up to rounding, at more traffic: weights and
            optimizer slots instead of gradients).
        bucket_bytes: Size of the pieces the average is reduced in.
        every_rank_writes: Let every rank print progress and write files
            (by default only rank 0 does).

    Returns:
        The optimizer, now distributed.

    Raises:
        ValueError: For a bad ``period``, or an optimizer already distributed.
        RuntimeError: If ``minidl_dist.init()`` was not called.
    """
    if isinstance(period, bool) or not isinstance(period, numbers.Integral) or period < 1:
        raise ValueError(f'period must be a positive integer number of optimizer steps '
                         f'between two averages, got {period!r}')
    optimizer = optimizers.get(optimizer)
    if optimizer.strategy is not None:
        raise ValueError(f'{optimizer.name} is already distributed')
    world = comm.world()
    optimizer.strategy = PeriodicAveraging(world, Reducer(world, bucket_bytes), int(period),
                                           every_rank_writes)
    return optimizer


class PeriodicAveraging(DataParallel):
    """The Strategy of :func:`ModelAveraging`.

    It keeps DataParallel's broadcast at the start, its checks of the
    ranks' plans, its exact loss and metric sums, its sharded evaluate and
    predict, and its per-rank random streams (each rank draws its own
    dropout masks), but computes and applies each rank's gradient alone.

    Args:
        comm: The mpi4py communicator of the ranks.
        reducer: The :class:`~minidl_dist.allreduce.Reducer` that sums over them.
        period: Optimizer steps between two averages.
        every_rank_writes: Let every rank print progress and write files.

    Attributes:
        averages: Number of averages made so far (each one allreduce of the model).
    """

    def __init__(self, comm, reducer, period, every_rank_writes=False):
        super().__init__(comm, reducer, None, every_rank_writes)
        self.period = period
        self.averages = 0
        self._unaveraged_steps = 0

    def begin(self, model):
        """Average what was trained since the last average (``train_on_batch``), then broadcast."""
        if self._model is model and self._unaveraged_steps:
            self.average()
        super().begin(model)

    def run_step(self, step, indices):
        """Average if ``period`` steps have passed, then compute this rank's shard alone."""
        # The loop has no hook after the update, so the average due after
        # step k runs at the start of step k + 1 (or at the end of the epoch).
        if self._unaveraged_steps >= self.period:
            self.average()
        model = self._model
        (part, start, stop), = self.parts(count_of(indices))
        self._steps += 1
        self._unaveraged_steps += 1
        # Each rank trains alone: SyncBatchNormalization uses this rank's shard too.
        train_alone(model, self._streams, step, indices, part, (start, stop), self._steps)

    def reduce_gradients(self, params):
        """Scale this rank's gradients by the number of ranks; nothing is sent.

        ``fit`` divides a part's summed loss by the global batch size, so
        the gradient here is ``n_r / n`` times that of the shard's mean
        loss (``n_r`` of ``n`` samples). Scaling the gradients (rather than
        the loss) by N leaves the loop, and the logged loss, as they are:
        with equal shards the result is the shard's mean-loss gradient, and
        with a short last batch each rank's step is weighted by its samples,
        so that the plain average of the ranks' SGD steps is the global
        batch's step.
        """
        for param in params:
            if param.grad is not None:
                param.grad = Tensor(param.grad.data * self.size, dtype=param.dtype)

    def end_epoch(self):
        """Average the steps of the epoch not averaged yet."""
        if self._unaveraged_steps:
            self.average()

    def average(self):
        """Replace weights, state weights and optimizer slots by their mean over the ranks."""
        model = self._model
        optimizer = model.optimizer
        tensors = model.trainable_weights + model_parts.state_weights(model)
        held = optimizer.get_weights()
        kept = 1 + len(optimizer.state_names)  # iterations and shared scalars: equal everywhere
        arrays = [to_host(tensor.data) for tensor in tensors] + held[kept:]
        dtypes = {array.dtype for array in arrays}
        if len(dtypes) > 1:
            raise NotImplementedError(f'minidl_dist averages weights of one dtype; this model '
                                      f'mixes {sorted(str(dtype) for dtype in dtypes)}')
        buffer = np.concatenate([array.reshape(-1) for array in arrays])
        with doing(f'averaging the models after step {self._steps}'):
            self.reducer.sum_(buffer)
        np.divide(buffer, self.size, out=buffer)
        offsets = np.cumsum([0] + [array.size for array in arrays]).tolist()
        means = [buffer[low:high].reshape(array.shape)
                 for low, high, array in zip(offsets, offsets[1:], arrays)]
        for tensor, mean in zip(tensors, means):
            tensor.data[...] = from_host(mean, tensor.data)
        optimizer.set_weights(held[:kept] + means[len(tensors):])
        self.averages += 1
        self._unaveraged_steps = 0
