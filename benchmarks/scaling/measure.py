"""Step time and traffic of W3, AlexNet and Deep Speech 2 under each scheme: the model's check.

Run as one plain process (the one-rank baseline and the compute calibration)
or under mpirun, on one host or on the fake hosts::

    python -m benchmarks.scaling.measure W3 --schemes plain --batch 64 --share-of 2
    mpirun -np 4 python -m benchmarks.scaling.measure W3 --schemes dp average --batch 64
    python -m minidl_dist.fakehosts -np 4 python -m benchmarks.scaling.measure AlexNet ...

``--share-of 2`` gives a plain process the share of the cores that each
rank of a 2-rank job gets (one core on 2: one thread for minidl, BLAS and
oneDNN alike; ``MINIDL_NUM_THREADS=1`` alone would leave oneDNN's and
BLAS's threads at 2). Schemes: ``plain`` (one process, the plain optimizer), ``dp``
(``DistributedOptimizer``), ``hybrid`` (``model_parallel=`` the model's
top Dense layers, :data:`benchmarks.scaling.workloads.HYBRID`) and
``average`` (``ModelAveraging(period=4)``). Every scheme trains with
SGD(0.01, momentum=0.9) on seeded synthetic data of ``--batch`` samples
(the global batch). ``plain``, ``dp`` and ``hybrid`` time ``--steps``
``train_on_batch`` calls after one warm-up, each started after a barrier:
the step time is the slowest rank's median. ``average`` times one
``fit`` epoch of ``2 x period`` steps after a warm-up epoch (``fit``
averages every ``period`` steps and at the epoch's end; a
``train_on_batch`` would average at every call): the step time is the
epoch's time over its steps. Bytes are :func:`minidl_dist.bytes_sent` per
step, the mean over ranks. Rank 0 prints one JSON line per scheme, with
the share of the CPUs that other processes used meanwhile.
"""

import argparse
import gc
import json
import os
import time

from mpi4py import MPI

import minidl
from benchmarks.common import cpu_jiffies
from benchmarks.dist import median_seconds
from benchmarks.scaling import workloads
from minidl.compute import threads
from minidl.optimizers import SGD

PERIOD = 4


def distributed_optimizer(scheme, name):
    """The optimizer ``compile`` gets for ``scheme`` (needs ``minidl_dist.init()`` if not plain)."""
    optimizer = SGD(0.01, momentum=0.9)
    if scheme == 'plain':
        return optimizer
    import minidl_dist as dist
    if scheme == 'dp':
        return dist.DistributedOptimizer(optimizer)
    if scheme == 'hybrid':
        return dist.DistributedOptimizer(optimizer, model_parallel=workloads.HYBRID[name])
    if scheme == 'average':
        return dist.ModelAveraging(optimizer, period=PERIOD)
    raise ValueError(f'unknown scheme {scheme!r}')


def sent():
    """Bytes this rank has sent so far (0 without minidl_dist)."""
    import minidl_dist as dist
    return dist.bytes_sent()


def measure(name, scheme, batch, steps, comm):
    """One scheme's figures for model ``name`` (the same on every rank)."""
    ranks = comm.Get_size()
    minidl.set_seed(0)
    model = workloads.build(name)
    model.compile(distributed_optimizer(scheme, name), loss=workloads.loss(name))
    x, y = workloads.data(name, batch)
    if scheme == 'average':
        steps = 2 * PERIOD
        x, y = workloads.data(name, batch * steps)
        fit = lambda: model.fit(x, y, batch_size=batch, epochs=1, shuffle=False,  # noqa: E731
                                verbose=0)
        fit()  # warm up
    else:
        model.train_on_batch(x, y)  # warm up (and build the optimizer's slots)
    comm.Barrier()
    before, (busy, own), wall = sent(), cpu_jiffies(), time.perf_counter()
    cpu = time.process_time()
    if scheme == 'average':
        fit()
        seconds = comm.allreduce(time.perf_counter() - wall, op=MPI.MAX) / steps
    else:
        seconds = median_seconds(lambda: model.train_on_batch(x, y), steps, comm)
    traffic = comm.allreduce(sent() - before) / ranks / steps
    cpu = comm.allreduce(time.process_time() - cpu, op=MPI.MAX) / steps
    wall = time.perf_counter() - wall
    busy_after, own_after = cpu_jiffies()
    busy = comm.bcast(busy_after - busy)  # the machine's reading: rank 0's
    own = comm.allreduce(own_after - own)
    foreign = max(0, busy - own) / (wall * os.sysconf('SC_CLK_TCK') * os.cpu_count())
    hosts = len(set(comm.allgather(MPI.Get_processor_name())))
    return {'model': name, 'scheme': scheme, 'ranks': ranks, 'hosts': hosts, 'batch': batch,
            'steps': steps, 'step_s': seconds, 'cpu_s': cpu, 'bytes_per_step': traffic,
            'threads': threads.num_threads(), 'foreign_cpu_pct': round(100 * foreign, 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('model', choices=sorted(workloads.LOSS))
    parser.add_argument('--schemes', nargs='+', default=['dp'],
                        choices=['plain', 'dp', 'hybrid', 'average'])
    parser.add_argument('--batch', type=int, required=True, help='global batch')
    parser.add_argument('--steps', type=int, default=3, help='timed steps (not for average)')
    parser.add_argument('--share-of', type=int, default=1,
                        help="use the cores' share of one of this many processes (plain)")
    args = parser.parse_args(argv)
    threads.set_ranks_on_host(args.share_of)
    if args.schemes != ['plain']:
        import minidl_dist as dist
        dist.init()
    comm = MPI.COMM_WORLD
    for scheme in args.schemes:
        row = measure(args.model, scheme, args.batch, args.steps, comm)
        gc.collect()  # the last scheme's model (AlexNet's is 0.5 GB with its momentum)
        if comm.Get_rank() == 0:
            print(json.dumps(row), flush=True)


if __name__ == '__main__':
    main()
