"""Trains small models with AsyncOptimizer, several configurations in one launch.

Usage: async_worker.py OUTPUT_DIR NAME [NAME ...] (under mpirun, 2 or 3 ranks),
each NAME a key of CONFIGURATIONS. Every configuration starts from rank 0's
weights (broadcast). Each rank writes rank<r>.json mapping a name to the
sha256 of its final weights, the loss history, the held-out accuracy, the
server's counters (rank 0) and the error train_on_batch raised after fit;
rank 0 writes <name>.npz (final weights) and <name>-initial.npz.

'digits_*' train an MLP (64-32-10) on scikit-learn's digits; 'softmax_*'
train softmax regression on 240 of them without shuffling, for the test
that recomputes the server's momentum updates with numpy; 'digits_bn_*' add
batch normalization and dropout. '*_slow' make
the last worker sleep 30 ms before each of its batches.
"""

import hashlib
import json
import pathlib
import sys
import time

import numpy as np

import minidl
import minidl_dist as dist
from minidl.callbacks import Callback
from minidl.datasets import digits
from minidl.layers import BatchNormalization, Dense, Dropout
from minidl.models import Sequential
from minidl.optimizers import SGD
from minidl.utils import to_categorical

MLP = dict(model='mlp', epochs=3, batch=64, lr=0.05)
SOFTMAX = dict(model='softmax', epochs=2, batch=40, lr=0.1, samples=240, shuffle=False)
CONFIGURATIONS = {
    'digits_async_free': dict(MLP, mode='async', schedule='free'),
    'digits_async_seeded': dict(MLP, mode='async', schedule='seeded', seed=7),
    'digits_async_seeded_other_seed': dict(MLP, mode='async', schedule='seeded', seed=8),
    'digits_stale_seeded': dict(MLP, mode='stale', staleness=2, schedule='seeded', seed=7),
    'digits_stale_free_slow': dict(MLP, mode='stale', staleness=1, schedule='free', slow=True),
    'digits_async_free_slow': dict(MLP, mode='async', schedule='free', slow=True),
    'digits_bn_dropout_seeded': dict(MLP, model='bn', epochs=2, mode='stale', staleness=0,
                                     schedule='seeded', seed=5),
    'softmax_async_seeded': dict(SOFTMAX, mode='async', schedule='seeded', seed=3),
    'softmax_stale_seeded': dict(SOFTMAX, mode='stale', staleness=1, schedule='seeded', seed=3),
}


class Slow(Callback):
    """Sleeps before each batch: a worker slower than the others."""

    def on_train_batch_begin(self, batch, logs=None):
        time.sleep(0.03)


def load(samples=None):
    (x, y), (x_test, y_test) = digits.load_data(test_split=0.2, seed=0)
    x, x_test = (part.reshape(len(part), 64).astype('float32') / 16 for part in (x, x_test))
    y, y_test = to_categorical(y, 10), to_categorical(y_test, 10)
    if samples is not None:
        x, y = x[:samples], y[:samples]
    return (x, y), (x_test, y_test)


def build(kind, seed):
    minidl.set_seed(seed)
    if kind == 'bn':  # moving statistics (averaged at epoch ends) and per-worker dropout
        return Sequential([Dense(32, activation='relu', input_shape=(64,)),
                           BatchNormalization(), Dropout(0.2), Dense(10, activation='softmax')])
    if kind == 'softmax':
        return Sequential([Dense(10, activation='softmax', input_shape=(64,))])
    return Sequential([Dense(32, activation='relu', input_shape=(64,)),
                       Dense(10, activation='softmax')])


def digest(model):
    return hashlib.sha256(b''.join(array.tobytes() for array in model.get_weights())).hexdigest()


def run(name, output, rank, size):
    config = CONFIGURATIONS[name]
    (x, y), test = load(config.get('samples'))
    model = build(config['model'], 11 + rank)  # only rank 0's weights count: broadcast
    optimizer = dist.AsyncOptimizer(SGD(config['lr'], momentum=0.9), mode=config['mode'],
                                    staleness=config.get('staleness'),
                                    schedule=config['schedule'], seed=config.get('seed', 0))
    model.compile(optimizer, 'categorical_crossentropy', metrics=['accuracy'])
    if rank == 0:
        np.savez(output / f'{name}-initial.npz', *model.get_weights())
    slow = [Slow()] if config.get('slow') and rank == size - 1 else []
    history = model.fit(x, y, batch_size=config['batch'], epochs=config['epochs'], verbose=0,
                        shuffle=config.get('shuffle', True), callbacks=slow)
    _, accuracy = model.evaluate(*test, batch_size=128, verbose=0)
    if rank == 0:
        np.savez(output / f'{name}.npz', *model.get_weights())
    try:
        model.train_on_batch(x[:config['batch']], y[:config['batch']])
        refused = None
    except RuntimeError as error:
        refused = str(error)
    return {'digest': digest(model), 'loss': history.history['loss'], 'accuracy': accuracy,
            'counters': optimizer.strategy.counters, 'train_on_batch': refused}


def main(output, names):
    output = pathlib.Path(output)
    dist.init()
    rank, size = dist.rank(), dist.size()
    summary = {name: run(name, output, rank, size) for name in names}
    (output / f'rank{rank}.json').write_text(json.dumps(summary))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
