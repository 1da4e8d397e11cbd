"""Lesson 8: many workers, many ways: synchronous, compressed, averaged, asynchronous.

Lessons 5 and 7 trained synchronously and with model averaging. Here every
way ``minidl_dist`` trains on several ranks runs on the same MLP, the same
digits, the same global batch and SGD with momentum; only the ``optimizer=``
of ``compile`` changes:

``dist.DistributedOptimizer(opt)``
    synchronous: every rank computes its share of each global batch, the
    gradients are summed over the ranks in a fixed order, every rank applies
    the same step.
``dist.DistributedOptimizer(opt, compression='qsgd')`` (or ``'topk'``)
    the same, with quantized gradients (QSGD: 4 bits per value and a norm per
    bucket, unbiased) or the largest 1 % of them (top-k: what is not sent
    waits in a residual for the next step): fewer bytes, a noisier step.
``dist.ModelAveraging(opt, period=4)``
    every rank steps alone on its shard and the models are averaged every 4
    steps: a quarter of the exchanges, at the price of the ranks drifting
    apart between them.
``dist.AsyncOptimizer(opt)`` and ``dist.AsyncOptimizer(opt, 'stale', staleness=1)``
    a parameter server: rank 0 holds the weights and the optimizer and
    computes nothing; the other ranks (the workers) send gradients and go
    on with the weights the server answers, without waiting for each other
    (asynchronous), or never more than 1 gradient ahead of the slowest
    (stale-synchronous). ``schedule='seeded', seed=1`` makes the server
    take the gradients in an order drawn from the seed instead of their
    order of arrival.

What each promises about determinism, which the lesson checks by training
every way twice from the same seed and comparing the weights' sha256:

- synchronous, QSGD, top-k, averaging: the same bits on every rank and in
  every run with the same number of ranks (QSGD's random rounding draws
  from streams seeded by ``minidl.set_seed``, the step and the rank).
- asynchronous and stale-synchronous, ``schedule='free'``: the order of
  arrival, which the operating system decides, changes the result from run
  to run (every rank still ends each epoch with the server's model).
- ``schedule='seeded'``: the order is the seed's, so a run replays bit for
  bit, at the cost of the server waiting for the worker whose turn it is.

On 2 ranks there is one worker, so there is only one order: free and seeded
are the same run (and the same as one process's SGD on the whole batch), and
all four asynchronous rows print the same digest. Run it on 3 or 4 ranks to
see free-running runs differ (usually; two runs may happen to meet the
gradients in the same order): on 3 ranks, 2026-11-27, both free rows
printed ``False`` and both seeded rows ``True``.

    mpirun -np 2 python -m minidl_dist tutorials/08_many_ways.py [output directory] [--full]

The figure ``many_ways.png`` in the output directory (default
``demo_output``; rank 0 writes it) draws the held-out accuracy after each
epoch against the training's wall time and against the KiB a rank sent, as
``benchmarks/modes.py`` does at length (``benchmarks/RESULTS.md``). Without
``--full`` the MLP trains 3 epochs each way; ``--full`` trains 15, and also
lesson 1's CNN (without dropout). The quick mode took 12 s under ``mpirun
-np 2`` on a 2-core AMD EPYC that other work shared (load average 6.4),
2026-11-27.
"""

import argparse
import hashlib
import pathlib
import sys
import time

import numpy as np
from mpi4py import MPI

import minidl
import minidl_dist as dist
from minidl.datasets import digits
from minidl.layers import Conv2D, Dense, Flatten, MaxPooling2D
from minidl.models import Sequential
from minidl.optimizers import SGD
from minidl.utils import to_categorical

BATCH_SIZE = 60  # the global batch: divisible by 1 to 5 ranks, and by 1 to 5 workers
WAYS = {
    'sync': lambda opt: dist.DistributedOptimizer(opt),
    'sync + QSGD': lambda opt: dist.DistributedOptimizer(opt, compression='qsgd'),
    'sync + top-k': lambda opt: dist.DistributedOptimizer(opt, compression='topk'),
    'averaging, period 4': lambda opt: dist.ModelAveraging(opt, period=4),
    'async, free': lambda opt: dist.AsyncOptimizer(opt),
    'async, seeded': lambda opt: dist.AsyncOptimizer(opt, schedule='seeded', seed=1),
    'stale s=1, free': lambda opt: dist.AsyncOptimizer(opt, 'stale', staleness=1),
    'stale s=1, seeded': lambda opt: dist.AsyncOptimizer(opt, 'stale', staleness=1,
                                                         schedule='seeded', seed=1),
}


def say(text):
    """Print on rank 0 only: N ranks would print everything N times."""
    if dist.rank() == 0:
        print(text, flush=True)


def load_digits(images):
    """Training and held-out digits in [0, 1] (8x8x1 images or flat vectors), labels one-hot."""
    (x_train, y_train), (x_test, y_test) = digits.load_data(test_split=0.2, seed=0)
    shape = (8, 8, 1) if images else (64,)
    x_train = x_train.reshape(len(x_train), *shape).astype('float32') / 16
    x_test = x_test.reshape(len(x_test), *shape).astype('float32') / 16
    return (x_train, to_categorical(y_train, 10)), (x_test, to_categorical(y_test, 10))


def build(kind):
    """The MLP of lessons 5 and 7, or lesson 1's CNN without its dropout."""
    minidl.set_seed(0)  # the same initial weights (rank 0's are broadcast anyway) and streams
    if kind == 'MLP':
        return Sequential([Dense(128, activation='relu', input_shape=(64,)),
                           Dense(10, activation='softmax')])
    return Sequential([Conv2D(16, 3, padding='same', activation='relu', input_shape=(8, 8, 1)),
                       MaxPooling2D(2), Conv2D(32, 3, padding='same', activation='relu'),
                       MaxPooling2D(2), Flatten(), Dense(64, activation='relu'),
                       Dense(10, activation='softmax')])


def train(kind, way, train_data, test_data, epochs):
    """Train one way; returns the curve [(s, KiB sent per rank, held-out accuracy)] after
    each epoch, and the weights' sha256 if every rank holds the same, else None."""
    model = build(kind)
    model.compile(optimizer=WAYS[way](SGD(0.02, momentum=0.9)),
                  loss='categorical_crossentropy', metrics=['accuracy'])
    seconds, sent, curve = 0.0, 0, []
    for epoch in range(epochs):  # an epoch at a time, to time and count the training alone
        MPI.COMM_WORLD.Barrier()  # start together: each rank's clock measures the same span
        before, start = dist.bytes_sent(), time.perf_counter()
        model.fit(*train_data, batch_size=BATCH_SIZE, initial_epoch=epoch, epochs=epoch + 1,
                  verbose=0)
        elapsed = time.perf_counter() - start
        sent += dist.bytes_sent() - before
        # Every rank's clock and count: the slowest rank's time, and the mean KiB of the
        # ranks (a parameter server sends more than a worker).
        ranks = dist.allgather(np.array([[elapsed, sent / 1024]])).reshape(dist.size(), 2)
        seconds += ranks[:, 0].max()
        _, accuracy = model.evaluate(*test_data, verbose=0)  # exact, all 360 held-out images
        curve.append((seconds, ranks[:, 1].mean(), accuracy))
    digest = hashlib.sha256(b''.join(w.tobytes() for w in model.get_weights())).digest()
    digests = dist.allgather(np.frombuffer(digest, np.uint8)).reshape(dist.size(), -1)
    return curve, digest.hex() if (digests == digests[0]).all() else None


def compare(kind, epochs):
    """Train every way twice; print a line each and the table; returns the curves."""
    train_data, test_data = load_digits(images=kind == 'CNN')
    say(f'\n{kind}: {epochs} epochs of {-(-len(train_data[0]) // BATCH_SIZE)} global batches '
        f'of {BATCH_SIZE}, SGD(0.02, momentum=0.9), on {dist.size()} ranks, each way twice')
    rows, curves = [], {}
    for way in WAYS:
        curve, digest = train(kind, way, train_data, test_data, epochs)
        _, again = train(kind, way, train_data, test_data, epochs)
        seconds, kib, accuracy = curve[-1]
        one_model = digest is not None and again is not None
        replays = one_model and digest == again
        say(f'{way:>20}: held-out accuracy {accuracy:.4f}, {seconds / epochs:.3f} s and '
            f'{kib / epochs:.1f} KiB per rank per epoch; one model on all ranks: {one_model}; '
            f'weights {(digest or "differ")[:16]}, second run {(again or "differ")[:16]}')
        rows.append(f'| {way} | {accuracy:.4f} | {seconds / epochs:.3f} | '
                    f'{kib / epochs:.1f} | {(digest or "differ")[:16]} | {replays} |')
        curves[way] = curve
    say(f'\n| {kind}, {dist.size()} ranks | held-out accuracy | s per epoch | KiB per rank per '
        'epoch | weights sha256 | second run, same bits |\n|---|---:|---:|---:|---|---|\n'
        + '\n'.join(rows))
    return curves


def draw(path, results):
    """Held-out accuracy after each epoch against the training's time and the KiB sent."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    figure = Figure(figsize=(10, 3.6 * len(results) + 0.6), layout='constrained')
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(results), 2, sharey=True, squeeze=False)
    for (kind, curves), (by_time, by_bytes) in zip(results.items(), axes):
        for way, curve in curves.items():
            seconds, kib, accuracy = np.array(curve).T
            line = '-' if way.startswith(('sync', 'averaging')) else '--'
            marker = '.' if 'seeded' in way else ''
            by_time.plot(seconds, accuracy, line, marker=marker, label=way)
            by_bytes.plot(kib, accuracy, line, marker=marker, label=way)
        by_time.set(title=f'{kind}: held-out accuracy against time',
                    xlabel='training wall time (s)', ylabel='held-out accuracy')
        by_bytes.set(title='... and against the traffic', xscale='log',
                     xlabel='KiB sent per rank so far (log scale)')
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc='outside lower center', ncols=4, fontsize='small')
    figure.savefig(path, format='png', dpi=80)
    print(f'held-out accuracy against time and traffic drawn to {path}')


def main(output_dir, full=False):
    dist.init()
    if dist.size() < 2:
        sys.exit('this lesson needs 2 ranks or more (AsyncOptimizer: a server and a worker): '
                 'mpirun -np 2 python -m minidl_dist tutorials/08_many_ways.py')
    output_dir = pathlib.Path(output_dir)
    if dist.rank() == 0:
        output_dir.mkdir(parents=True, exist_ok=True)
    epochs = 15 if full else 3
    results = {kind: compare(kind, epochs) for kind in (('MLP', 'CNN') if full else ('MLP',))}
    if dist.rank() == 0:
        draw(output_dir / 'many_ways.png', results)


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the figure goes (default: demo_output; rank 0 writes)')
    parser.add_argument('--full', action='store_true',
                        help='15 epochs instead of 3, and the CNN after the MLP')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also through mpirun
    main(args.output_dir, args.full)
