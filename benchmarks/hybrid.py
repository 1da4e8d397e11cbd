"""Hybrid against data-parallel AlexNet: traffic, memory per rank and step time.

Run under mpirun, or as one plain process for the one-rank baseline::

    mpirun -np 2 python -m benchmarks.hybrid [--batches 16 64] [--steps 3]
    python -m benchmarks.hybrid

``zoo.AlexNet(variant='slides', classes=1000)`` trains on seeded random
224x224x3 images and one-hot labels with SGD(0.01, momentum=0.9) and
categorical cross-entropy, for each global batch size, two ways:
data-parallel (``DistributedOptimizer(SGD(...))``) and hybrid
(``model_parallel=['fc6', 'fc7', 'predictions']``). After one warm-up
``train_on_batch``, ``--steps`` steps are timed, each after a barrier; the
step time is the slowest rank's median. Rank 0 prints one JSON line per
configuration, then a Markdown table.

Bytes sent (:func:`minidl_dist.bytes_sent`) are per step and rank (mean
over ranks), split into the forward and backward pass (activations), the
gradient sum and the loss totals; ``expected`` is what the algorithms
send, with ``f = N - 1``, ``b = B / N`` rows per rank, float32 values and
float64 loss totals:

- data-parallel: ``2 f / N x 4 x parameters``, plus ``2 f / N x 8 x totals``;
- hybrid: the same sum over the convolutions' parameters only; the first
  model-parallel layer gathers the global batch (``4 b in f``) and, in the
  backward pass, sum-scatters its gradient (``f / N x 4 B in``); each
  model-parallel layer gathers its output columns (``4 B units / N f``);
  the later ones sum their input gradient over ranks (``2 f / N x 4 B in``);
  the last one's output gradient rows are gathered (``4 b units f``).
  Activations grow with B, the weights' gradients do not.

(The sum-scatter is half an allreduce with a power-of-two number of ranks,
a whole one otherwise.) ``held`` is :func:`minidl_dist.held_bytes`: weights
and momentum held by a rank after the steps (gradients and activations not
included). ``foreign_cpu_pct`` is the share of the machine's CPUs that other
processes used while the steps ran: above ~5 %, the time was measured under
load. With more ranks than cores, the ranks share them.
"""

import argparse
import functools
import gc
import json
import os
import time

import numpy as np
from mpi4py import MPI

import minidl
import minidl_dist as dist
import zoo
from benchmarks.common import cpu_jiffies
from benchmarks.dist import median_seconds
from minidl.compute import threads
from minidl.optimizers import SGD

MODEL_PARALLEL = ['fc6', 'fc7', 'predictions']
CLASSES = 1000
PHASES = ('activations', 'gradients', 'totals')


def synthetic_data(batch):
    """Seeded standard-normal NHWC images and one-hot labels, the same on every rank."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 224, 224, 3), dtype=np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, size=batch)]
    return x, y


def count_phases(strategy, counts):
    """Add the bytes each phase of a training step sends to ``counts`` (wrapping ``strategy``)."""
    def counted(method, phase):
        def wrapper(*args, **kwargs):
            before = dist.bytes_sent()
            try:
                return method(*args, **kwargs)
            finally:
                counts[phase] += dist.bytes_sent() - before
        return wrapper
    strategy.run_step = counted(strategy.run_step, 'activations')
    strategy.reduce_gradients = counted(strategy.reduce_gradients, 'gradients')
    strategy.reduce_sum = counted(strategy.reduce_sum, 'totals')


def foreign_cpu_percent(busy_before, own_before, wall, comm):
    """Share of the machine's CPUs that processes other than the ranks used since the readings."""
    busy, own = cpu_jiffies()
    # Busy time is the machine's, the same reading on every rank: rank 0's counts.
    busy = comm.bcast(busy - busy_before)
    own = comm.allreduce(own - own_before)
    capacity = wall * os.sysconf('SC_CLK_TCK') * os.cpu_count()
    return round(100 * max(0, busy - own) / capacity, 1)


def expected_bytes(model, hybrid, batch, ranks):
    """Bytes one rank sends per step by the formulas of the module docstring."""
    others = ranks - 1
    allreduce = lambda values, itemsize: 2 * others / ranks * itemsize * values  # noqa: E731
    sharded = [model.get_layer(name) for name in MODEL_PARALLEL] if hybrid else []
    sharded_weights = {id(weight) for layer in sharded for weight in layer.weights}
    parameters = sum(weight.size for weight in model.trainable_weights
                     if id(weight) not in sharded_weights)
    expected = allreduce(parameters, 4) + allreduce(len(model.objectives.totals()), 8)
    if sharded:
        rows, first = batch // ranks, sharded[0].kernel.shape[0]
        expected += 4 * rows * first * others + allreduce(batch * first, 4) / 2
        for layer in sharded:
            expected += 4 * batch * layer.units // ranks * others
        for layer in sharded[1:]:
            expected += allreduce(batch * layer.kernel.shape[0], 4)
        expected += 4 * rows * sharded[-1].units * others
    return expected


def measure(hybrid, batch, steps, comm):
    """One configuration's figures (the same on every rank)."""
    ranks = comm.Get_size()
    minidl.set_seed(0)
    model = zoo.AlexNet(variant='slides', classes=CLASSES)
    optimizer = dist.DistributedOptimizer(
        SGD(0.01, momentum=0.9), model_parallel=MODEL_PARALLEL if hybrid else None)
    model.compile(optimizer, loss='categorical_crossentropy')
    x, y = synthetic_data(batch)
    model.train_on_batch(x, y)  # warm up (and build the optimizer's slots)
    counts = dict.fromkeys(PHASES, 0)
    count_phases(optimizer.strategy, counts)
    comm.Barrier()
    sent, (busy, own), wall = dist.bytes_sent(), cpu_jiffies(), time.perf_counter()
    seconds = median_seconds(functools.partial(model.train_on_batch, x, y), steps, comm)
    sent = dist.bytes_sent() - sent
    foreign = foreign_cpu_percent(busy, own, time.perf_counter() - wall, comm)
    held = dist.held_bytes(model)
    mean = lambda value: comm.allreduce(value) / ranks  # noqa: E731
    figures = {
        'ranks': ranks, 'mode': 'hybrid' if hybrid else 'data-parallel', 'batch': batch,
        'steps': steps, 'sent_per_step': mean(sent) / steps,
        'sent_per_step_max': comm.allreduce(sent, op=MPI.MAX) / steps,
        'expected': expected_bytes(model, hybrid, batch, ranks),
        **{f'sent_{phase}': mean(counts[phase]) / steps for phase in PHASES},
        'held': mean(held), 'held_max': comm.allreduce(held, op=MPI.MAX),
        'step_s': seconds, 'foreign_cpu_pct': foreign,
    }
    del model, optimizer
    gc.collect()
    return figures


def table(rows):
    """The figures of ``rows`` as a Markdown table."""
    mib = lambda value: f'{value / 2 ** 20:.1f}'  # noqa: E731
    lines = ['| ranks | mode | global batch | MiB sent / step / rank | expected MiB | '
             'sent / expected | activations / gradients / totals MiB '
             '| weights + momentum MiB / rank | step s | foreign cpu % |',
             '|---:|---|---:|---:|---:|---:|---|---:|---:|---:|']
    for row in rows:
        ratio = f"{row['sent_per_step'] / row['expected']:.4f}" if row['expected'] else '-'
        split = ' / '.join(mib(row[f'sent_{phase}']) for phase in PHASES)
        lines.append(f"| {row['ranks']} | {row['mode']} | {row['batch']} | "
                     f"{mib(row['sent_per_step'])} | {mib(row['expected'])} | {ratio} | {split} | "
                     f"{mib(row['held_max'])} | {row['step_s']:.2f} | {row['foreign_cpu_pct']} |")
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--batches', type=int, nargs='+', default=[16, 64],
                        help='global batch sizes')
    parser.add_argument('--steps', type=int, default=3, help='timed steps per configuration')
    parser.add_argument('--modes', nargs='+', choices=['data-parallel', 'hybrid'],
                        default=['data-parallel', 'hybrid'])
    args = parser.parse_args(argv)
    dist.init()
    comm = MPI.COMM_WORLD
    rows = []
    for batch in args.batches:
        for mode in args.modes:
            row = measure(mode == 'hybrid', batch, args.steps, comm)
            rows.append(row)
            if comm.Get_rank() == 0:
                print(json.dumps(row), flush=True)
    if comm.Get_rank() == 0:
        print(f'\n### AlexNet (slides, 1000 classes), {comm.Get_size()} ranks x '
              f'{threads.cpu_share()} core(s) each, SGD with momentum, '
              f'median of {args.steps} steps\n\n{table(rows)}', flush=True)


if __name__ == '__main__':
    main()
