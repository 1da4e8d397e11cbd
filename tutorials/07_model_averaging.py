"""Lesson 7: model averaging, or how to talk less between ranks.

Synchronous data parallelism (``dist.DistributedOptimizer``) sums every
gradient over the ranks at every step: each step waits for an allreduce of
the whole model. Model averaging (Su et al. 2015) lets every rank take
``period`` steps alone, on its shard of each global batch and with its own
optimizer, and then averages the ranks' models (weights, batch-norm
statistics and optimizer state, in a fixed order: every rank then holds
the same bits, and every run gives the same bits)::

    model.compile(optimizer=dist.ModelAveraging(SGD(0.05, momentum=0.9), period=4),
                  loss='categorical_crossentropy')

When it pays: the traffic falls about ``period`` times, so it helps where
communication is what limits training: slow links between hosts, many
ranks, large models with little computation per weight. Its cost is
staleness: between two averages the ranks drift apart, each following the
gradient of fewer samples, which can slow convergence as ``period`` grows;
hence the models are also averaged at the end of every epoch, so that
validation, ``evaluate`` and ``save`` see one model. With ``period=1`` and
SGD it is synchronous training again (up to rounding), at more traffic:
weights and optimizer state travel instead of gradients.

The lesson trains a small MLP on the 8x8 digits synchronously and with
periods 4 and 16, prints what each rank sent and the held-out accuracy, and
draws the held-out accuracy per epoch, and against the bytes sent so far
(``model_averaging.png`` in the output directory, default ``demo_output``;
rank 0 writes it):

    mpirun -np 2 python -m minidl_dist tutorials/07_model_averaging.py [output directory] [--full]

Without ``--full`` it runs 4 epochs; ``--full`` runs 20. The quick mode took
12 s under ``mpirun -np 2`` on a 2-core AMD EPYC that other work shared
(load average 7.7), 2026-11-27.
"""

import argparse
import hashlib
import pathlib
import sys

import numpy as np

import minidl
import minidl_dist as dist
from minidl.datasets import digits
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD
from minidl.utils import to_categorical


def say(text):
    """Print on rank 0 only: N ranks would print everything N times."""
    if dist.rank() == 0:
        print(text, flush=True)


def load_digits():
    """Training and held-out digits as flat vectors in [0, 1], labels one-hot."""
    (x_train, y_train), (x_test, y_test) = digits.load_data(test_split=0.2, seed=0)
    x_train = x_train.reshape(len(x_train), 64).astype('float32') / 16
    x_test = x_test.reshape(len(x_test), 64).astype('float32') / 16
    return (x_train, to_categorical(y_train, 10)), (x_test, to_categorical(y_test, 10))


def train(optimizer, train_data, test_data, epochs):
    """Train a fresh MLP; returns (KiB this rank sent per epoch of training, held-out loss
    and accuracy, held-out accuracy after each epoch, model)."""
    minidl.set_seed(0)  # rank 0's initial weights are broadcast to the others anyway
    model = Sequential([Dense(128, activation='relu', input_shape=(64,)),
                        Dense(10, activation='softmax')])
    model.compile(optimizer=optimizer, loss='categorical_crossentropy', metrics=['accuracy'])
    sent, curve = 0, []
    for epoch in range(epochs):  # an epoch at a time, to count the training's bytes alone
        before = dist.bytes_sent()
        model.fit(*train_data, batch_size=64, initial_epoch=epoch, epochs=epoch + 1,
                  verbose=0)  # 64: the global batch
        sent += dist.bytes_sent() - before
        loss, accuracy = model.evaluate(*test_data, verbose=0)  # exact, all held-out images
        curve.append(accuracy)
        say(f'    epoch {epoch + 1}/{epochs}: held-out accuracy {accuracy:.4f}, '
            f'{sent / 1024:.0f} KiB sent so far')
    return sent / 1024 / epochs, loss, accuracy, curve, model


def same_on_every_rank(model):
    """Whether all ranks hold bitwise the same weights (their sha256 digests, gathered)."""
    digest = hashlib.sha256(b''.join(w.tobytes() for w in model.get_weights())).digest()
    digests = dist.allgather(np.frombuffer(digest, np.uint8)).reshape(dist.size(), -1)
    return bool((digests == digests[0]).all())


def main(output_dir, full=False):
    dist.init()
    output_dir = pathlib.Path(output_dir)
    if dist.rank() == 0:
        output_dir.mkdir(parents=True, exist_ok=True)
    train_data, test_data = load_digits()
    epochs = 20 if full else 4
    optimizers = {'synchronous': dist.DistributedOptimizer(SGD(0.05, momentum=0.9))}
    for period in (4, 16):
        optimizers[f'averaging, period {period}'] = dist.ModelAveraging(
            SGD(0.05, momentum=0.9), period=period)
    results, curves = {}, {}
    for name, optimizer in optimizers.items():
        say(f'{name}: {epochs} epochs on {dist.size()} rank(s)')
        sent, loss, accuracy, curve, model = train(optimizer, train_data, test_data, epochs)
        # After fit every rank holds the same model: compare the ranks' digests.
        same = same_on_every_rank(model)
        results[name] = accuracy
        curves[name] = sent, curve
        say(f'{name:>20}: {sent:6.1f} KiB sent per rank per epoch, held-out loss '
            f'{loss:.4f}, accuracy {accuracy:.4f}; all {dist.size()} ranks hold the '
            f'same weights: {same}')
    if dist.rank() == 0:
        draw(output_dir / 'model_averaging.png', curves, dist.size())
    return results


def draw(path, curves, ranks):
    """Held-out accuracy per epoch, and against the KiB a rank has sent by then."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
    figure = Figure(figsize=(10, 4), layout='constrained')
    FigureCanvasAgg(figure)
    per_epoch, per_byte = figure.subplots(1, 2, sharey=True)
    for name, (sent, curve) in curves.items():
        epochs = np.arange(1, len(curve) + 1)
        per_epoch.plot(epochs, curve, marker='o', label=name)
        if ranks > 1:
            per_byte.plot(sent * epochs, curve, marker='o', label=name)
    per_epoch.legend(loc='lower right')
    per_epoch.set(title='held-out accuracy per epoch', xlabel='epoch',
                  ylabel='held-out accuracy')
    per_epoch.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole epochs
    if ranks == 1:  # nothing to draw against: one rank sends nothing
        per_byte.text(0.5, 0.5, 'one rank sends nothing:\nrun the lesson under mpirun -np 2',
                      ha='center', va='center', transform=per_byte.transAxes)
        per_byte.set(title='traffic', xticks=[])
        figure.savefig(path, format='png')
        print(f'held-out accuracy per epoch drawn to {path}')
        return
    per_byte.set(title=f'... against the traffic (one rank of {ranks})', xscale='log',
                 xlabel='KiB sent by a rank so far (log scale)')
    per_byte.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))  # 100, 200, 500, 1000, ...
    per_byte.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f'{value:g}'))
    per_byte.xaxis.set_minor_formatter(NullFormatter())
    figure.savefig(path, format='png')
    print(f'held-out accuracy per epoch and per KiB sent drawn to {path}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the files go (default: demo_output; rank 0 writes)')
    parser.add_argument('--full', action='store_true', help='20 epochs instead of 4')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also through mpirun
    main(args.output_dir, args.full)
