"""The invariant mode's price: ``mpirun -np 2 python -m benchmarks.invariant [W2 W3 W5]``.

Training steps (``train_on_batch``, SGD with momentum) at twice each
workload's batch, the global batch, with ``DistributedOptimizer`` in its
plain data-parallel mode and in the invariant mode (``micro_shards=4``: each
quarter of the global batch computed alone, bitwise the same weights on 1, 2
or 4 ranks). Run without mpirun it times one process: the same two modes on
one rank and the model without minidl_dist, each on all the cores, which is
what "2 ranks at least as fast as one process" compares against. Each
process keeps to its share of the cores (``minidl.compute.threads``).

Rank 0 prints one Markdown row per workload and mode: median step ms, and
the invariant mode's price over the plain mode.
"""

import argparse
import time

import numpy as np
from mpi4py import MPI

import minidl
import minidl_dist as dist
from benchmarks import workloads
from minidl import functions as F
from minidl import losses, optimizers
from minidl.compute import threads

MICRO_SHARDS = 4


def _loss(workload):
    if workload.ID == 'W5':  # its CTC loss, with lengths for whatever batch it is given
        def ctc(y_true, y_pred):
            n = y_pred.shape[0]
            lengths = np.full(n, workload.FRAMES), np.full(n, workload.LABELS)
            return F.ctc_loss(y_true, y_pred, *lengths) / workload.LABELS
        return ctc
    return losses.SparseCategoricalCrossentropy(from_logits=True)


def step_ms(workload, mode, steps, comm):
    """Median training step time of ``workload`` in ``mode`` ('single', 'plain', 'invariant')."""
    minidl.set_seed(0)
    model = workload.minidl_model()
    optimizer = optimizers.SGD(learning_rate=0.01, momentum=0.9)
    if mode != 'single':
        optimizer = dist.DistributedOptimizer(
            optimizer, micro_shards=MICRO_SHARDS if mode == 'invariant' else None)
    model.compile(optimizer, loss=_loss(workload))
    x, y = workload.data()
    x, y = np.concatenate([x, x]), np.concatenate([y, y])  # the global batch
    if x.ndim == 4:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # NCHW -> NHWC
    for _ in range(2):
        model.train_on_batch(x, y)  # warm up
    times = []
    for _ in range(steps):
        comm.Barrier()
        start = time.perf_counter()
        model.train_on_batch(x, y)
        times.append(time.perf_counter() - start)
    return comm.allreduce(float(np.median(times)) * 1e3, op=MPI.MAX)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('workloads', nargs='*', default=['W2', 'W3', 'W5'])
    parser.add_argument('--steps', type=int, default=5)
    args = parser.parse_args(argv)
    dist.init()
    comm = MPI.COMM_WORLD
    ranks = comm.Get_size()
    modes = ('single', 'plain', 'invariant') if ranks == 1 else ('plain', 'invariant')
    rows = []
    for workload_id in args.workloads:
        workload = workloads.load(workload_id.upper())
        times = {mode: step_ms(workload, mode, args.steps, comm) for mode in modes}
        price = times['invariant'] / times['plain'] - 1
        prices = {'invariant': f'{100 * price:+.0f} %'}
        rows += [f'| {workload.ID} {workload.NAME} | {2 * workload.BATCH} | {mode} '
                 f'| {times[mode]:.1f} | {prices.get(mode, "")} |' for mode in modes]
    if comm.Get_rank() == 0:
        print(f'{ranks} rank(s) x {threads.cpu_share()} core(s), micro_shards={MICRO_SHARDS}')
        print('| workload | global batch | mode | step ms | invariant over plain |')
        print('|---|---:|---|---:|---:|')
        print('\n'.join(rows), flush=True)


if __name__ == '__main__':
    main()
