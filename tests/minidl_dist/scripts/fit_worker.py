"""Trains small models with minidl_dist (or with plain minidl as the reference).

Usage: fit_worker.py MODE OUTPUT_DIR, MODE one of

- reference: plain minidl, no minidl_dist (BatchNormalization for SyncBatchNormalization);
- plain: DistributedOptimizer, SyncBatchNormalization; also prints progress
  and writes a CSV log, checkpoints and a saved model whose names carry the rank;
- invariant: DistributedOptimizer(micro_shards=4) on a model with batch
  normalization and two kinds of dropout.

Each rank writes rank<r>.json (sha256 of its weights, history, evaluate and
predict results) and rank 0 writes weights.npz.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np

import minidl
from minidl.callbacks import CSVLogger, ModelCheckpoint
from minidl.layers import (BatchNormalization, Conv2D, Dense, Dropout, Flatten,
                           MaxPooling2D)
from minidl.models import Sequential
from minidl.optimizers import SGD, Adam


def data(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, 6, 6, 1)).astype('float32')
    labels = ((x[:, :3].sum(axis=(1, 2, 3)) > 0).astype('int64')
              + (x[:, 3:, :3].mean(axis=(1, 2, 3)) > 0.2))
    return x, np.eye(3, dtype='float32')[labels]


def mlp(normalization, seed):
    minidl.set_seed(seed)
    return Sequential([Flatten(input_shape=(6, 6, 1)), Dense(16, activation='tanh'),
                       normalization(), Dense(3, activation='softmax')])


def convnet(seed):
    minidl.set_seed(seed)
    return Sequential([Conv2D(4, 3, input_shape=(6, 6, 1)), BatchNormalization(),
                       MaxPooling2D(), Flatten(), Dropout(0.3), Dense(8, activation='relu'),
                       Dropout(0.2, seed=11), Dense(3, activation='softmax')])


def weights_digest(model):
    return hashlib.sha256(b''.join(w.tobytes() for w in model.get_weights())).hexdigest()


def main(mode, output):
    output = pathlib.Path(output)
    rank = 0
    if mode == 'reference':
        wrap = lambda optimizer, **kwargs: optimizer  # noqa: E731
        normalization = BatchNormalization
    else:
        import minidl_dist as dist
        dist.init()
        rank = dist.rank()
        wrap = dist.DistributedOptimizer
        normalization = dist.SyncBatchNormalization
    x, y = data(100, 0)
    x_val, y_val = data(37, 1)
    summary, callbacks = {}, []
    if mode == 'invariant':
        model = convnet(4 + rank)
        model.compile(wrap(SGD(0.1, momentum=0.9), micro_shards=4), 'categorical_crossentropy',
                      metrics=['accuracy'])
        verbose = 0
    else:
        model = mlp(normalization, 3 + rank)
        model.compile(wrap(Adam(0.01)), 'categorical_crossentropy', metrics=['accuracy'])
        verbose = 2 if mode == 'plain' else 0
        callbacks = [CSVLogger(str(output / f'log_rank{rank}.csv')),
                     ModelCheckpoint(str(output / f'checkpoint_rank{rank}.h5'))]
    # Each rank seeded its weights and generators differently (3 + rank): only
    # the broadcast of rank 0's makes evaluate and predict give one process's
    # values before training, and training follow one process's.
    # predict_on_batch first: the *_on_batch methods must broadcast too.
    summary['predict_on_batch_initial'] = model.predict_on_batch(x_val[:8]).tolist()
    summary['evaluate_initial'] = model.evaluate(x_val, y_val, batch_size=8, verbose=0)
    summary['predict_initial'] = model.predict(x_val, batch_size=16).tolist()
    history = model.fit(x, y, batch_size=32, epochs=3, verbose=verbose, callbacks=callbacks,
                        validation_data=(x_val, y_val))
    if mode != 'invariant':
        model.save(str(output / f'model_rank{rank}.h5'))
    summary['digest'] = weights_digest(model)
    summary['history'] = history.history
    summary['evaluate'] = model.evaluate(x_val, y_val, batch_size=8, verbose=0)
    summary['predict'] = model.predict(x_val, batch_size=16).tolist()
    summary['predict_three'] = model.predict(x_val[:3]).tolist()
    (output / f'rank{rank}.json').write_text(json.dumps(summary))
    if rank == 0:
        np.savez(output / 'weights.npz', *model.get_weights())


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
