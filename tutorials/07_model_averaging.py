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
periods 4 and 16, and prints what each rank sent and the held-out accuracy:

    mpirun -np 2 python tutorials/07_model_averaging.py [--full]

Without ``--full`` it runs 4 epochs (seconds); ``--full`` runs 20.
"""

import argparse
import hashlib

import numpy as np

import minidl
import minidl_dist as dist
from minidl.datasets import digits
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD
from minidl.utils import to_categorical


def load_digits():
    """Training and held-out digits as flat vectors in [0, 1], labels one-hot."""
    (x_train, y_train), (x_test, y_test) = digits.load_data(test_split=0.2, seed=0)
    x_train = x_train.reshape(len(x_train), 64).astype('float32') / 16
    x_test = x_test.reshape(len(x_test), 64).astype('float32') / 16
    return (x_train, to_categorical(y_train, 10)), (x_test, to_categorical(y_test, 10))


def train(optimizer, train_data, test_data, epochs):
    """Train a fresh MLP; returns (KiB this rank sent per epoch, held-out loss and accuracy,
    model)."""
    minidl.set_seed(0)  # rank 0's initial weights are broadcast to the others anyway
    model = Sequential([Dense(128, activation='relu', input_shape=(64,)),
                        Dense(10, activation='softmax')])
    model.compile(optimizer=optimizer, loss='categorical_crossentropy', metrics=['accuracy'])
    before = dist.bytes_sent()
    model.fit(*train_data, batch_size=64, epochs=epochs, verbose=0)  # 64: the global batch
    sent = (dist.bytes_sent() - before) / 1024 / epochs
    loss, accuracy = model.evaluate(*test_data, verbose=0)  # exact, over all held-out images
    return sent, loss, accuracy, model


def same_on_every_rank(model):
    """Whether all ranks hold bitwise the same weights (their sha256 digests, gathered)."""
    digest = hashlib.sha256(b''.join(w.tobytes() for w in model.get_weights())).digest()
    digests = dist.allgather(np.frombuffer(digest, np.uint8)).reshape(dist.size(), -1)
    return bool((digests == digests[0]).all())


def main(quick=True):
    dist.init()
    train_data, test_data = load_digits()
    epochs = 4 if quick else 20
    optimizers = {'synchronous': dist.DistributedOptimizer(SGD(0.05, momentum=0.9))}
    for period in (4, 16):
        optimizers[f'averaging, period {period}'] = dist.ModelAveraging(
            SGD(0.05, momentum=0.9), period=period)
    results = {}
    for name, optimizer in optimizers.items():
        sent, loss, accuracy, model = train(optimizer, train_data, test_data, epochs)
        # After fit every rank holds the same model: compare the ranks' digests.
        same = same_on_every_rank(model)
        results[name] = accuracy
        if dist.rank() == 0:
            print(f'{name:>20}: {sent:6.1f} KiB sent per rank per epoch, held-out loss '
                  f'{loss:.4f}, accuracy {accuracy:.4f}; all {dist.size()} ranks hold the '
                  f'same weights: {same}')
    return results


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--full', action='store_true', help='20 epochs instead of 4')
    main(quick=not parser.parse_args().full)
