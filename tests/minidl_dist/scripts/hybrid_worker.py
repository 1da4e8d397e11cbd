"""Hybrid parallelism checks, run under mpirun (or as one process for the references).

Usage: hybrid_worker.py MODE OUTPUT_DIR [FILE], MODE one of

- functions: the sharded Dense's forward, input gradient and kernel gradient
  on float64 data against numpy's products for the global batch;
- fit-hybrid, fit-data, fit-reference: a small convnet trained with its two
  Dense layers model-parallel, all data-parallel, or in one plain process;
  rank 0 writes weights.npz, evaluate and predict results; rank 0 also
  prints the summary, and save writes model.h5 (Adam state included), a
  ModelCheckpoint checkpoint.h5;
- load: load_model(FILE), compiled again model-parallel over this job's
  ranks, one more epoch; writes the loaded and trained weights;
- invariant: micro_shards=4 with both Dense layers model-parallel and dropout
  on either side of the first; rank 0 writes invariant.json (weights' sha256,
  losses);
- errors: the messages compile gives for bad model_parallel arguments.
"""

import json
import pathlib
import sys

import numpy as np

import minidl
from minidl import Tensor
from minidl import functions as F
from minidl.callbacks import ModelCheckpoint
from minidl.layers import Conv2D, Dense, Flatten, MaxPooling2D
from minidl.models import Sequential, load_model
from minidl.optimizers import Adam

EPOCHS, BATCH = 3, 16


def data(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, 6, 6, 1)).astype('float32')
    labels = ((x[:, :3].sum(axis=(1, 2, 3)) > 0).astype('int64') * 2
              + (x[:, 3:, :3].mean(axis=(1, 2, 3)) > 0.2))
    return x, np.eye(4, dtype='float32')[labels]


def convnet(seed):
    minidl.set_seed(seed)
    return Sequential([Conv2D(4, 3, activation='relu', input_shape=(6, 6, 1)), MaxPooling2D(),
                       Flatten(), Dense(16, activation='relu', name='fc1'),
                       Dense(4, activation='softmax', name='predictions')])


def functions_check(output, dist):
    from minidl_dist.comm import world
    from minidl_dist.collectives import world_reducer
    from minidl_dist.functions import (gather_batch_rows, gather_columns, own_rows,
                                       sum_gradients)
    comm, rank, size = world(), dist.rank(), dist.size()
    rng = np.random.default_rng(0)  # the same global values on every rank
    counts = [3 + r for r in range(size)]
    x_all = rng.normal(size=(sum(counts), 5))
    kernel, bias = rng.normal(size=(5, 8)), rng.normal(size=8)
    upstream = rng.normal(size=(sum(counts), 8))  # dL/dy of the global batch
    start, width = sum(counts[:rank]), 8 // size
    columns = slice(rank * width, (rank + 1) * width)
    x = Tensor(x_all[start:start + counts[rank]], dtype='float64', requires_grad=True)
    w = Tensor(kernel[:, columns].copy(), dtype='float64', requires_grad=True)
    b = Tensor(bias[columns].copy(), dtype='float64', requires_grad=True)
    gathered = sum_gradients(gather_batch_rows(x, comm, counts), world_reducer())
    y = gather_columns(F.dense(gathered, w, b), comm, [width] * size)
    mine = own_rows(y, comm, counts)
    F.sum(mine * Tensor(upstream[start:start + counts[rank]], dtype='float64')).backward()
    expected_y = x_all @ kernel + bias
    errors = {
        'forward': float(np.abs(y.data - expected_y).max()),
        'own_rows': float(np.abs(mine.data - expected_y[start:start + counts[rank]]).max()),
        'input_gradient': float(np.abs(
            x.grad.data - (upstream @ kernel.T)[start:start + counts[rank]]).max()),
        'kernel_gradient': float(np.abs(w.grad.data - (x_all.T @ upstream)[:, columns]).max()),
        'bias_gradient': float(np.abs(b.grad.data - upstream.sum(0)[columns]).max()),
    }
    (output / f'rank{rank}.json').write_text(json.dumps(errors))


def fit_check(mode, output, dist):
    rank = 0 if dist is None else dist.rank()
    model = convnet(7 + rank)  # other seeds on other ranks: rank 0's weights must win
    optimizer = Adam(0.01)
    if mode == 'fit-hybrid':
        optimizer = dist.DistributedOptimizer(optimizer, model_parallel=['fc1', 'predictions'])
    elif mode == 'fit-data':
        optimizer = dist.DistributedOptimizer(optimizer)
    model.compile(optimizer, 'categorical_crossentropy', metrics=['accuracy'])
    lines = []
    model.summary(print_fn=lines.append)
    x, y = data(96, 0)
    x_test, y_test = data(40, 1)
    checkpoint = ModelCheckpoint(str(output / 'checkpoint.h5'))  # saves on every rank
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, verbose=0,
                        callbacks=[checkpoint])
    evaluation = model.evaluate(x_test, y_test, batch_size=20, verbose=0)
    predictions = model.predict(x_test, batch_size=20)
    weights = model.get_weights()  # these four gather the shards: every rank calls them
    count = model.count_params()
    model.save(str(output / 'model.h5'))
    if rank == 0:
        np.savez(output / 'weights.npz', *weights)
        np.save(output / 'predictions.npy', predictions)
        (output / 'result.json').write_text(json.dumps({
            'loss': history.history['loss'], 'evaluate': evaluation, 'summary': lines,
            'shapes': [list(w.shape) for w in weights],
            'count_params': count}))


def invariant_check(output, dist):
    import hashlib
    from minidl.layers import Dropout
    from minidl.optimizers import SGD
    minidl.set_seed(11 + dist.rank())
    model = Sequential([Conv2D(4, 3, activation='relu', input_shape=(6, 6, 1)), MaxPooling2D(),
                        Flatten(), Dropout(0.2), Dense(16, activation='relu', name='fc1'),
                        Dropout(0.3), Dense(4, activation='softmax', name='predictions')])
    model.compile(dist.DistributedOptimizer(SGD(0.05, momentum=0.9), micro_shards=4,
                                            model_parallel=['fc1', 'predictions']),
                  'categorical_crossentropy')
    x, y = data(96, 0)
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0)
    weights = model.get_weights()
    if dist.rank() == 0:
        digest = hashlib.sha256(b''.join(w.tobytes() for w in weights)).hexdigest()
        (output / 'invariant.json').write_text(json.dumps({'digest': digest,
                                                          'loss': history.history['loss']}))


def load_check(output, file, dist):
    model = load_model(file)
    loaded = model.get_weights()
    model.compile(dist.DistributedOptimizer(model.optimizer, model_parallel='dense'),
                  'categorical_crossentropy')
    placed = model.get_weights()
    x, y = data(96, 0)
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    if dist.rank() == 0:
        np.savez(output / 'loaded.npz', *loaded)
        np.savez(output / 'placed.npz', *placed)
        np.savez(output / 'trained.npz', *model.get_weights())
    else:
        model.get_weights()  # a collective: every rank takes part


def errors_check(output, dist):
    messages = {}
    cases = {'missing': ['fc1', 'fc9'], 'not_dense': ['flatten_x'], 'indivisible': ['fc1']}
    for case, names in cases.items():
        model = convnet(0)
        if case == 'not_dense':
            names = [model.layers[2].name]
        if case == 'indivisible':
            minidl.set_seed(0)
            model = Sequential([Dense(6, input_shape=(3,), name='fc1'), Dense(2)])
        try:
            model.compile(dist.DistributedOptimizer('sgd', model_parallel=names), 'mse')
            messages[case] = None
        except ValueError as error:
            messages[case] = str(error)
    minidl.set_seed(0)
    model = Sequential([Dense(8, input_shape=(3,), kernel_regularizer='l2', name='fc1')])
    try:
        model.compile(dist.DistributedOptimizer('sgd', model_parallel=['fc1']), 'mse')
        messages['penalty'] = None
    except NotImplementedError as error:
        messages['penalty'] = str(error)
    model = convnet(0)
    model.compile(dist.DistributedOptimizer('sgd', model_parallel='dense'), 'mse')
    try:
        model.compile('sgd', 'mse')  # its Dense layers hold shards now
        messages['recompiled'] = None
    except ValueError as error:
        messages['recompiled'] = str(error)
    for case, argument in {'string': 'fc1', 'number': 3, 'repeated': ['fc1', 'fc1']}.items():
        try:
            dist.DistributedOptimizer('sgd', model_parallel=argument)
            messages[case] = None
        except ValueError as error:
            messages[case] = str(error)
    if dist.rank() == 0:
        (output / 'errors.json').write_text(json.dumps(messages))


def main(mode, output, file=None):
    output = pathlib.Path(output)
    dist = None
    if mode != 'fit-reference':
        import minidl_dist as dist
        dist.init()
    if mode == 'functions':
        functions_check(output, dist)
    elif mode.startswith('fit-'):
        fit_check(mode, output, dist)
    elif mode == 'load':
        load_check(output, file, dist)
    elif mode == 'invariant':
        invariant_check(output, dist)
    else:
        errors_check(output, dist)


if __name__ == '__main__':
    main(*sys.argv[1:])
