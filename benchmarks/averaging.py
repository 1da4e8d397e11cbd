"""Model averaging against synchronous data parallelism: traffic and accuracy on the digits.

Run under mpirun: ``mpirun -np 2 python -m benchmarks.averaging [--epochs 20]``.

The same MLP (64-128-10, rank 0's initial weights) trains on scikit-learn's
8x8 digits (1,437 training images, 360 held out, ``minidl.datasets.digits``)
with the same global batch, optimizer and number of epochs, four ways:
synchronous data parallelism (``DistributedOptimizer``: gradients summed at
every step) and model averaging (``ModelAveraging``) with period 1, 4 and
16. Rank 0 prints a Markdown table: bytes each rank sent per epoch during
``fit`` (:func:`minidl_dist.bytes_sent`, mean over the ranks), averages per
epoch, held-out loss and accuracy, and seconds per epoch (slowest rank;
with more ranks than cores, the ranks share them).
"""

import argparse
import time

from mpi4py import MPI

import minidl
import minidl_dist as dist
from minidl.datasets import digits
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD
from minidl.utils import to_categorical

PERIODS = (1, 4, 16)


def load_digits():
    """Training and held-out digits as flat vectors in [0, 1] with one-hot labels."""
    (x_train, y_train), (x_test, y_test) = digits.load_data(test_split=0.2, seed=0)
    flat = lambda images: images.reshape(len(images), -1).astype('float32') / 16  # noqa: E731
    return ((flat(x_train), to_categorical(y_train, 10)),
            (flat(x_test), to_categorical(y_test, 10)))


def train(distributed, train_data, test_data, args, comm):
    """Fit a fresh model; returns (bytes per epoch, averages per epoch, loss, accuracy, s/epoch)."""
    minidl.set_seed(0)
    model = Sequential([Dense(128, activation='relu', input_shape=(64,)),
                        Dense(10, activation='softmax')])
    model.compile(distributed, 'categorical_crossentropy', metrics=['accuracy'])
    comm.Barrier()
    sent, start = dist.bytes_sent(), time.perf_counter()
    model.fit(*train_data, batch_size=args.batch_size, epochs=args.epochs, verbose=0)
    seconds = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    sent = comm.allreduce(dist.bytes_sent() - sent) / comm.Get_size()
    loss, accuracy = model.evaluate(*test_data, batch_size=256, verbose=0)
    averages = getattr(distributed.strategy, 'averages', 0)
    return sent / args.epochs, averages / args.epochs, loss, accuracy, seconds / args.epochs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--batch-size', type=int, default=64, help='global batch')
    parser.add_argument('--learning-rate', type=float, default=0.05)
    parser.add_argument('--momentum', type=float, default=0.9)
    args = parser.parse_args(argv)
    dist.init()
    comm = MPI.COMM_WORLD
    train_data, test_data = load_digits()
    optimizer = lambda: SGD(args.learning_rate, momentum=args.momentum)  # noqa: E731
    runs = [('synchronous (DistributedOptimizer)', dist.DistributedOptimizer(optimizer()))]
    runs += [(f'ModelAveraging period={period}', dist.ModelAveraging(optimizer(), period=period))
             for period in PERIODS]
    rows = []
    for name, distributed in runs:
        sent, averages, loss, accuracy, seconds = train(distributed, train_data, test_data,
                                                        args, comm)
        rows.append(f'| {name} | {sent / 1024:.1f} | {averages:.0f} | {loss:.4f} | '
                    f'{accuracy:.4f} | {seconds:.3f} |')
    if comm.Get_rank() == 0:
        steps = -(-len(train_data[0]) // args.batch_size)
        print(f'### Model averaging, {comm.Get_size()} ranks: digits MLP, {args.epochs} epochs '
              f'of {steps} steps, global batch {args.batch_size}, SGD(lr={args.learning_rate}, '
              f'momentum={args.momentum})\n\n'
              '| training | KiB sent per rank per epoch | averages per epoch | held-out loss '
              '| held-out accuracy | s per epoch |\n|---|---:|---:|---:|---:|---:|\n'
              + '\n'.join(rows), flush=True)


if __name__ == '__main__':
    main()
