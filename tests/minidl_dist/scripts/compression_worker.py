"""Trains the digits MLP of the README with each gradient compression, twice.

Usage: compression_worker.py OUTPUT_DIR (under mpirun). For 'none', 'qsgd'
and 'topk', two models built from the same seed train for 3 epochs (SGD,
global batch 128); each rank writes rank<r>.json mapping
``<compression>/<run>`` to the sha256 of its final weights, the loss
history, the bytes it sent during ``fit`` and the held-out accuracy; and
under 'warmup' the rate of each batch of one epoch with
``LearningRateWarmup(warmup_epochs=1)`` (its scale: the number of ranks).
"""

import hashlib
import json
import pathlib
import sys

import minidl
import minidl_dist as dist
from minidl.callbacks import LambdaCallback
from minidl.datasets import digits
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD
from minidl.utils import to_categorical


def main(output):
    output = pathlib.Path(output)
    dist.init()
    (x, y), (x_test, y_test) = digits.load_data()
    x, x_test = x.reshape(-1, 64) / 16, x_test.reshape(-1, 64) / 16
    y, y_test = to_categorical(y, 10), to_categorical(y_test, 10)
    summary = {}
    for compression in ('none', 'qsgd', 'topk'):
        for run in range(2):
            minidl.set_seed(0)
            model = Sequential([Dense(128, activation='relu', input_shape=(64,)),
                                Dense(10, activation='softmax')])
            optimizer = dist.DistributedOptimizer(SGD(0.2, momentum=0.9),
                                                  compression=compression)
            model.compile(optimizer, 'categorical_crossentropy')
            before = dist.bytes_sent()
            history = model.fit(x, y, batch_size=128, epochs=3, verbose=0)
            sent = dist.bytes_sent() - before
            predictions = model.predict(x_test, batch_size=128)
            accuracy = float((predictions.argmax(axis=1) == y_test.argmax(axis=1)).mean())
            digest = hashlib.sha256(b''.join(w.tobytes() for w in model.get_weights()))
            summary[f'{compression}/{run}'] = {
                'digest': digest.hexdigest(), 'loss': history.history['loss'], 'bytes': sent,
                'accuracy': accuracy, 'samples': len(x)}
    minidl.set_seed(0)
    model = Sequential([Dense(10, activation='softmax', input_shape=(64,))])
    model.compile(dist.DistributedOptimizer(SGD(0.1)), 'categorical_crossentropy')
    rates = []
    record = LambdaCallback(
        on_batch_begin=lambda batch, logs: rates.append(model.optimizer.learning_rate))
    model.fit(x, y, batch_size=128, epochs=1, verbose=0,
              callbacks=[dist.callbacks.LearningRateWarmup(warmup_epochs=1), record])
    summary['warmup'] = rates
    (output / f'rank{dist.rank()}.json').write_text(json.dumps(summary))


if __name__ == '__main__':
    main(sys.argv[1])
