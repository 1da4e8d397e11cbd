"""Asynchronous and stale-synchronous SGD, free-running against seeded: what determinism costs.

Run under mpirun: ``mpirun -np 3 python -m benchmarks.async_sgd [--epochs 5 --repeats 3]``.

The same MLP (64-128-10, rank 0's initial weights) trains on scikit-learn's
digits with the same global batch, optimizer and epochs: synchronous data
parallelism (``DistributedOptimizer``, every rank computes) for reference,
then ``AsyncOptimizer`` (rank 0 serves, the others compute) asynchronous and
stale-synchronous (bound 1), each with the free-running and the seeded
schedule. The runs are interleaved and repeated; rank 0 prints a Markdown
table of medians: seconds per epoch (slowest rank), global batches and
server updates per second, the largest lead of a worker, the mean delay of
a gradient (updates between the weights it was computed on and those it was
applied to) and the held-out accuracy. With more ranks than cores, and with
other work on the machine, the timings carry that noise.
"""

import argparse
import statistics
import time

from mpi4py import MPI

import minidl
import minidl_dist as dist
from benchmarks.averaging import load_digits
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD

RUNS = {
    'synchronous (DistributedOptimizer)': lambda opt: dist.DistributedOptimizer(opt),
    'async, free': lambda opt: dist.AsyncOptimizer(opt),
    'async, seeded': lambda opt: dist.AsyncOptimizer(opt, schedule='seeded', seed=1),
    'stale s=1, free': lambda opt: dist.AsyncOptimizer(opt, 'stale', staleness=1),
    'stale s=1, seeded': lambda opt: dist.AsyncOptimizer(opt, 'stale', staleness=1,
                                                         schedule='seeded', seed=1),
}


def train(name, train_data, test_data, args, comm):
    """Fit a fresh model one way; returns (s per epoch, updates, max lead, delays, accuracy)."""
    minidl.set_seed(0)
    model = Sequential([Dense(128, activation='relu', input_shape=(64,)),
                        Dense(10, activation='softmax')])
    distributed = RUNS[name](SGD(args.learning_rate, momentum=args.momentum))
    model.compile(distributed, 'categorical_crossentropy', metrics=['accuracy'])
    comm.Barrier()
    start = time.perf_counter()
    model.fit(*train_data, batch_size=args.batch_size, epochs=args.epochs, verbose=0)
    seconds = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    _, accuracy = model.evaluate(*test_data, batch_size=256, verbose=0)
    counters = getattr(distributed.strategy, 'counters', {})
    return (seconds / args.epochs, counters.get('updates'), counters.get('max_lead'),
            counters.get('delays'), accuracy)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--batch-size', type=int, default=60, help='global batch')
    parser.add_argument('--learning-rate', type=float, default=0.02)
    parser.add_argument('--momentum', type=float, default=0.9)
    args = parser.parse_args(argv)
    dist.init()
    comm = MPI.COMM_WORLD
    train_data, test_data = load_digits()
    steps = -(-len(train_data[0]) // args.batch_size)
    measured = {name: [] for name in RUNS}
    for _ in range(args.repeats):
        for name in RUNS:  # interleaved, so that slow spells of the machine hit every run
            measured[name].append(train(name, train_data, test_data, args, comm))
    if comm.Get_rank() != 0:
        return
    rows = []
    for name, results in measured.items():
        seconds = statistics.median(result[0] for result in results)
        updates, lead, delays, accuracy = results[0][1:]
        per_second = '' if updates is None else f'{updates / args.epochs / seconds:.0f}'
        delay = '' if updates is None else f'{delays / updates:.2f}'
        leads = '' if lead is None else max(result[2] for result in results)
        accuracies = sorted(f'{result[4]:.3f}' for result in results)
        rows.append(f'| {name} | {seconds:.3f} | {steps / seconds:.0f} | {per_second} | '
                    f'{leads} | {delay} | {", ".join(accuracies)} |')
    print(f'### AsyncOptimizer, {comm.Get_size()} ranks: digits MLP, {args.epochs} epochs of '
          f'{steps} global batches of {args.batch_size}, SGD(lr={args.learning_rate}, '
          f'momentum={args.momentum}), median of {args.repeats} runs\n\n'
          '| training | s per epoch | batches/s | server updates/s | max lead | mean delay '
          '(first run) | held-out accuracy (each run) |\n'
          '|---|---:|---:|---:|---:|---:|---|\n' + '\n'.join(rows), flush=True)


if __name__ == '__main__':
    main()
