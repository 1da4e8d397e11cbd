"""minidl_dist: deterministic MPI data-parallel, hybrid and model-averaging training for minidl.

A Keras script becomes data-parallel with three lines, then runs with
``mpirun -np N python -m minidl_dist train.py``::

    import minidl_dist as dist
    dist.init()
    model.compile(optimizer=dist.DistributedOptimizer(Adam()), loss=...)

``fit``'s ``batch_size`` is then the global batch; every sample is used once
per epoch; metrics, ``evaluate`` and ``predict`` cover the whole data; only
rank 0 prints and writes files. Gradients are summed in a fixed order (the
same bits on every rank and run); ``DistributedOptimizer(opt,
micro_shards=S)`` makes the result independent of the number of ranks.
``DistributedOptimizer(opt, model_parallel=['fc6', 'fc7'])`` splits those
Dense layers by columns over the ranks, the rest staying data-parallel
(:mod:`minidl_dist.hybrid`); ``ModelAveraging(opt, period=k)`` lets the ranks
train apart and averages their models every ``k`` steps
(:mod:`minidl_dist.averaging`). ``DistributedOptimizer(opt,
compression='qsgd')`` (or ``'topk'``, ``QSGD(...)``, ``TopK(...)``) sends
quantized or sparse gradients (:mod:`minidl_dist.compressed`);
``LearningRateWarmup`` is Goyal et al.'s warm-up to ``lr * ranks``.
``AsyncOptimizer(opt, mode='async'|'stale')`` trains with a parameter
server on rank 0, in the order gradients arrive or in one fixed by a seed
(:mod:`minidl_dist.async_sgd`).
``bytes_sent()`` and ``held_bytes(model)`` measure the traffic and the
memory per rank.

No hangs: under the launcher (``python -m minidl_dist``,
:mod:`minidl_dist.launcher`) an uncaught exception, a non-zero exit or
``os._exit`` on any rank, before or after ``init()``, aborts the whole job,
naming the rank and its step (:mod:`minidl_dist.failfast`); a rank that
ends early while another waits for it does too (:mod:`minidl_dist.ending`);
a rank that waits longer than ``MINIDL_DIST_TIMEOUT`` seconds (default 300,
or ``init(timeout=...)``) in one collective aborts it, saying what it waited
for (:mod:`minidl_dist.watchdog`); ``fit`` refuses, on every rank, ranks
with different numbers of samples, batch sizes or models.
"""

from minidl_dist.async_sgd import AsyncOptimizer
from minidl_dist.averaging import ModelAveraging
from minidl_dist.callbacks import BroadcastWeights, LearningRateWarmup
from minidl_dist.collectives import allgather, allreduce, broadcast
from minidl_dist.comm import init, local_rank, local_size, rank, size
from minidl_dist.model_parts import held_bytes
from minidl_dist.optimizers import DistributedOptimizer
from minidl_dist.qsgd import QSGD
from minidl_dist.sync_batch_norm import SyncBatchNormalization
from minidl_dist.topk import TopK
from minidl_dist.traffic import bytes_sent

__all__ = [
    'AsyncOptimizer', 'BroadcastWeights', 'DistributedOptimizer', 'LearningRateWarmup',
    'ModelAveraging', 'QSGD', 'SyncBatchNormalization', 'TopK', 'allgather', 'allreduce',
    'broadcast', 'bytes_sent', 'held_bytes', 'init', 'local_rank', 'local_size', 'rank', 'size',
]
