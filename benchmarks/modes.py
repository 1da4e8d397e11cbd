"""Every way minidl_dist trains on many ranks, side by side: accuracy against time and bytes.

Run under mpirun, once per model and number of ranks::

    mpirun -np 2 python -m benchmarks.modes --model mlp --repeats 3 --json benchmarks/modes.jsonl
    mpirun -np 4 python -m benchmarks.modes --model cnn --repeats 3 --json benchmarks/modes.jsonl

then ``python -m benchmarks.modes_report benchmarks/modes.jsonl`` for the
table and the figure.

The same model (rank 0's initial weights, ``minidl.set_seed(0)``) trains on
scikit-learn's 8x8 digits (1,437 training images, 360 held out) with the
same global batch, SGD with momentum and number of epochs, eight ways:
synchronous data parallelism (``DistributedOptimizer``) with exact, QSGD and
top-k gradients, model averaging (period 4), and ``AsyncOptimizer``
asynchronous and stale-synchronous (bound 1), each free-running and seeded
(rank 0 serves, the others compute). Models: ``mlp``, 64-128-10 as in the
other digits benchmarks; ``cnn``, lesson 1's LeNet without its dropout
(two 3x3 convolutions of 16 and 32 filters with 2x2 pooling, Dense 64, 10).

Training runs an epoch per ``fit`` call; after each, rank 0 records one
JSON line: the wall time of training so far (the slowest rank's, after a
barrier; held-out evaluation not counted), the bytes each rank sent during
training so far (:func:`minidl_dist.bytes_sent`: the mean over the ranks,
and the busiest rank's, which is the server's under AsyncOptimizer), and
the held-out loss and accuracy (``evaluate`` on all 360 images). The
``--repeats`` runs of the modes are interleaved, so that slow spells of the
machine hit every mode. With more ranks than cores, or other work on the
machine, the times carry that noise.
"""

import argparse
import datetime
import json
import time

from mpi4py import MPI

import minidl
import minidl_dist as dist
from benchmarks.async_sgd import RUNS as ASYNC_RUNS
from benchmarks.averaging import load_digits
from minidl.layers import Conv2D, Dense, Flatten, MaxPooling2D
from minidl.models import Sequential
from minidl.optimizers import SGD

MODES = {
    'sync': lambda opt: dist.DistributedOptimizer(opt),
    'sync + QSGD': lambda opt: dist.DistributedOptimizer(opt, compression='qsgd'),
    'sync + top-k': lambda opt: dist.DistributedOptimizer(opt, compression='topk'),
    'averaging, period 4': lambda opt: dist.ModelAveraging(opt, period=4),
    **{name: make for name, make in ASYNC_RUNS.items() if not name.startswith('synchronous')},
}


def build(model):
    """A fresh model of the named kind, from seed 0."""
    minidl.set_seed(0)
    if model == 'mlp':
        return Sequential([Dense(128, activation='relu', input_shape=(64,)),
                           Dense(10, activation='softmax')])
    return Sequential([Conv2D(16, 3, padding='same', activation='relu', input_shape=(8, 8, 1)),
                       MaxPooling2D(2),
                       Conv2D(32, 3, padding='same', activation='relu'),
                       MaxPooling2D(2),
                       Flatten(),
                       Dense(64, activation='relu'),
                       Dense(10, activation='softmax')])


def digits_for(model):
    """The digits as the model reads them: flat vectors, or 8x8x1 images (values in [0, 1])."""
    train_data, test_data = load_digits()
    if model == 'cnn':
        as_images = lambda data: (data[0].reshape(-1, 8, 8, 1), data[1])  # noqa: E731
        train_data, test_data = as_images(train_data), as_images(test_data)
    return train_data, test_data


def train(mode, run, args, train_data, test_data, comm):
    """Fit a fresh model one way, an epoch at a time; yields a record after each epoch."""
    model = build(args.model)
    model.compile(MODES[mode](SGD(args.learning_rate, momentum=args.momentum)),
                  'categorical_crossentropy', metrics=['accuracy'])
    seconds, sent = 0.0, 0
    for epoch in range(args.epochs):
        comm.Barrier()
        before, start = dist.bytes_sent(), time.perf_counter()
        model.fit(*train_data, batch_size=args.batch_size, initial_epoch=epoch,
                  epochs=epoch + 1, verbose=0)
        seconds += comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
        sent += dist.bytes_sent() - before
        loss, accuracy = model.evaluate(*test_data, batch_size=256, verbose=0)
        every_rank = comm.allgather(sent)
        yield {'model': args.model, 'ranks': comm.Get_size(), 'mode': mode, 'run': run,
               'epoch': epoch + 1,
               'seconds': round(seconds, 4), 'bytes_mean': sum(every_rank) / len(every_rank),
               'bytes_max': max(every_rank), 'loss': round(float(loss), 6),
               'accuracy': round(float(accuracy), 6)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', choices=('mlp', 'cnn'), default='mlp')
    parser.add_argument('--epochs', type=int, default=15)
    parser.add_argument('--repeats', type=int, default=1,
                        help='runs of each mode, interleaved (slow spells then hit every mode)')
    parser.add_argument('--batch-size', type=int, default=60,
                        help='global batch (60: divisible by 1 to 5 ranks and workers)')
    parser.add_argument('--learning-rate', type=float, default=0.02)
    parser.add_argument('--momentum', type=float, default=0.9)
    parser.add_argument('--modes', nargs='+', choices=list(MODES), default=list(MODES),
                        metavar='MODE', help=f'a subset of: {", ".join(MODES)}')
    parser.add_argument('--json', help='append the JSON lines to this file (rank 0)')
    args = parser.parse_args(argv)
    dist.init()
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        parser.error('run under mpirun -np 2 or more: AsyncOptimizer needs a server and a worker')
    train_data, test_data = digits_for(args.model)
    settings = {'batch_size': args.batch_size, 'learning_rate': args.learning_rate,
                'momentum': args.momentum, 'date': datetime.date.today().isoformat()}
    runs = [(run, mode) for run in range(args.repeats) for mode in args.modes]
    for run, mode in runs:
        for record in train(mode, run, args, train_data, test_data, comm):
            if comm.Get_rank() != 0:
                continue
            line = json.dumps({**record, **settings})
            print(line, flush=True)
            if args.json:
                with open(args.json, 'a') as out:
                    out.write(line + '\n')


if __name__ == '__main__':
    main()
