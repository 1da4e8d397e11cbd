"""minidl_dist benchmarks; run under mpirun: ``mpirun -np 2 python -m benchmarks.dist``.

(a) Allreduce: minidl_dist's fixed-order allreduce (exact and with float16
    on the wire) against MPI's ``comm.Allreduce`` on the same float32
    buffers, 4 KiB to 64 MiB; median times and algorithmic bandwidth
    (bytes / time). Target: at least 0.9x Allreduce's bandwidth from 1 MiB.
(b) Scaling (with 2 ranks): W3 (ResNet-20) training steps with global batch
    128 on 2 ranks, against 1 rank with batch 64 (run by rank 0 while the
    other rank waits), each rank on its share of the cores
    (``minidl.compute.threads.cpu_share``: one core, one thread, on a 2-core
    host). Target: step-time ratio <= 1.15, i.e. communication and the
    sharding cost at most 15 %.

Rank 0 prints Markdown tables.
"""

import argparse
import os
import time

import numpy as np
from mpi4py import MPI

import minidl
import minidl_dist as dist
from minidl import losses, optimizers
from minidl.compute import threads
from minidl_dist.allreduce import Reducer

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]


def median_seconds(function, repeats, comm):
    """Median over ``repeats`` timed calls, each started together on all ranks."""
    times = []
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    # The slowest rank's time is the collective's.
    return comm.allreduce(float(np.median(times)), op=MPI.MAX)


def label(size):
    return f'{size >> 20} MiB' if size >= 1 << 20 else f'{size >> 10} KiB'


def allreduce_table(comm):
    exact, compressed = Reducer(comm), Reducer(comm, wire_dtype='float16')
    rows = []
    for size in SIZES:
        # Zeros: repeated in-place sums of other values would overflow to inf.
        buffer = np.zeros(size // 4, np.float32)
        repeats = max(5, min(200, (64 << 20) // size // 4))
        for function in (lambda: comm.Allreduce(MPI.IN_PLACE, buffer),
                         lambda: exact.sum_(buffer), lambda: compressed.sum_(buffer)):
            function()  # warm up (and allocate work buffers)
        mpi = median_seconds(lambda: comm.Allreduce(MPI.IN_PLACE, buffer), repeats, comm)
        ours = median_seconds(lambda: exact.sum_(buffer), repeats, comm)
        half = median_seconds(lambda: compressed.sum_(buffer), repeats, comm)
        rows.append(f'| {label(size)} | {mpi * 1e3:.3f} | {size / mpi / 1e9:.2f} | '
                    f'{ours * 1e3:.3f} | {size / ours / 1e9:.2f} | {mpi / ours:.2f} | '
                    f'{half * 1e3:.3f} | {mpi / half:.2f} |')
    return ['| buffer | Allreduce ms | GB/s | ours ms | GB/s | ours / Allreduce bandwidth '
            '| ours fp16 wire ms | fp16 / Allreduce bandwidth |',
            '|---|---:|---:|---:|---:|---:|---:|---:|'] + rows


def w3_model(distributed):
    from benchmarks.workloads import w3_resnet20
    minidl.set_seed(0)
    model = w3_resnet20.minidl_model()
    optimizer = optimizers.SGD(learning_rate=0.01, momentum=0.9)
    model.compile(dist.DistributedOptimizer(optimizer) if distributed else optimizer,
                  loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def w3_step_ms(active, batch, distributed, steps, comm):
    """Median W3 step time on the ``active`` ranks and the foreign CPU share meanwhile."""
    from benchmarks.common import cpu_jiffies, synthetic_batch
    median, own = 0.0, 0
    comm.Barrier()
    busy_before, _ = cpu_jiffies()
    wall = time.perf_counter()
    if active:
        model = w3_model(distributed)
        x, y = synthetic_batch(batch, (3, 32, 32), 10)
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        for _ in range(2):
            model.train_on_batch(x, y)  # warm up
        _, own_before = cpu_jiffies()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            model.train_on_batch(x, y)
            times.append(time.perf_counter() - start)
        own = cpu_jiffies()[1] - own_before
        median = float(np.median(times)) * 1e3
    comm.Barrier()  # idle ranks wait here (MPICH polls: their CPU counts as the job's)
    wall = time.perf_counter() - wall
    busy = cpu_jiffies()[0] - busy_before
    own = comm.allreduce(own if active else int(wall * os.sysconf('SC_CLK_TCK')))
    foreign = max(0, busy - own) / (wall * os.sysconf('SC_CLK_TCK') * os.cpu_count())
    return comm.allreduce(median, op=MPI.MAX), 100 * foreign


def scaling_table(comm, steps):
    rank = comm.Get_rank()
    single = w3_step_ms(rank == 0, 64, False, steps, comm)
    independent = w3_step_ms(True, 64, False, steps, comm)
    double = w3_step_ms(True, 128, True, steps, comm)
    gradient_count = sum(weight.size for weight in w3_model(False).trainable_weights)
    reducer = Reducer(comm)
    gradients = np.zeros(gradient_count + 1, np.float32)
    reducer.sum_(gradients)
    reduce = median_seconds(lambda: reducer.sum_(gradients), 20, comm)
    if rank != 0:
        return []
    cores = f'{threads.cpu_share()} core(s)'
    return ['| configuration | step ms | foreign cpu % |', '|---|---:|---:|',
            f'| 1 rank x {cores}, batch 64 | {single[0]:.1f} | {single[1]:.1f} |',
            f'| 2 ranks x {cores}, batch 64 each, no communication | {independent[0]:.1f} '
            f'| {independent[1]:.1f} |',
            f'| 2 ranks x {cores}, global batch 128 (DistributedOptimizer) | {double[0]:.1f} '
            f'| {double[1]:.1f} |',
            f'| ratio 2 ranks / 1 rank (target <= 1.15) | {double[0] / single[0]:.3f} | |',
            f'| ratio 2 ranks / 2 independent ranks | {double[0] / independent[0]:.3f} | |',
            f'| gradient allreduce alone ({gradient_count * 4 / 2 ** 20:.2f} MiB) '
            f'| {reduce * 1e3:.2f} | |']


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=10, help='timed W3 steps')
    parser.add_argument('--skip-scaling', action='store_true')
    args = parser.parse_args(argv)
    dist.init()
    comm = MPI.COMM_WORLD
    lines = [f'### Allreduce, {comm.Get_size()} ranks (float32)', ''] + allreduce_table(comm)
    if comm.Get_size() == 2 and not args.skip_scaling:
        lines += ['', '### W3 scaling, 2 ranks', ''] + scaling_table(comm, args.steps)
    if comm.Get_rank() == 0:
        print('\n'.join(lines), flush=True)


if __name__ == '__main__':
    main()
