"""Trains one small model several ways: synchronous data parallelism and model averaging.

Usage: averaging_worker.py OUTPUT_DIR (under mpirun). Every configuration
trains the same model (rank 0's initial weights, broadcast) on the same
data for 3 epochs of 4 global batches (32, 32, 32 and 6 samples: the last
one split unevenly on 4 ranks). Each rank writes rank<r>.json mapping a
configuration to the sha256 of its final weights and optimizer state, the
bytes it sent during ``fit``, the number of averages and the loss history;
rank 0 also writes <configuration>.npz with the weights.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np

import minidl
import minidl_dist as dist
from minidl.layers import BatchNormalization, Dense, Dropout
from minidl.models import Sequential
from minidl.optimizers import SGD, Adam

EPOCHS = 3
BATCH = 32
CONFIGURATIONS = {
    'sync_sgd': (dist.DistributedOptimizer, lambda: SGD(0.1), {}),
    'average_sgd_1': (dist.ModelAveraging, lambda: SGD(0.1), {'period': 1}),
    'sync_momentum': (dist.DistributedOptimizer, lambda: SGD(0.05, momentum=0.9), {}),
    'average_momentum_1': (dist.ModelAveraging, lambda: SGD(0.05, momentum=0.9), {'period': 1}),
    'average_sgd_3': (dist.ModelAveraging, lambda: SGD(0.1), {'period': 3}),
    'average_adam_3': (dist.ModelAveraging, lambda: Adam(0.01), {'period': 3}),
}


def data(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, 12)).astype('float32')
    labels = (x[:, :4].sum(axis=1) > 0).astype('int64') + (x[:, 4:8].mean(axis=1) > 0.3)
    return x, np.eye(3, dtype='float32')[labels]


def model_for(seed):
    """An MLP with batch normalization (state weights) and dropout (per-rank draws)."""
    minidl.set_seed(seed)
    return Sequential([Dense(16, activation='tanh', input_shape=(12,)), BatchNormalization(),
                       Dropout(0.2), Dense(3, activation='softmax')])


def state_digest(model):
    """sha256 of the weights and the optimizer state (momentum, moments, step count)."""
    arrays = model.get_weights() + model.optimizer.get_weights()
    return hashlib.sha256(b''.join(array.tobytes() for array in arrays)).hexdigest()


def main(output):
    output = pathlib.Path(output)
    dist.init()
    rank = dist.rank()
    x, y = data(102, 0)
    summary = {}
    for name, (wrap, optimizer, options) in CONFIGURATIONS.items():
        # Each rank seeds differently: only rank 0's broadcast weights make the runs comparable.
        model = model_for(3 + rank)
        distributed = wrap(optimizer(), **options)
        model.compile(distributed, 'categorical_crossentropy')
        before = dist.bytes_sent()
        history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0)
        summary[name] = {'digest': state_digest(model), 'bytes': dist.bytes_sent() - before,
                         'averages': getattr(distributed.strategy, 'averages', None),
                         'loss': history.history['loss']}
        if rank == 0:
            np.savez(output / f'{name}.npz', *model.get_weights())
    (output / f'rank{rank}.json').write_text(json.dumps(summary))


if __name__ == '__main__':
    main(sys.argv[1])
