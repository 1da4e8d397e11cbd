"""Trains a digits MLP under 'mixed_float16' with DistributedOptimizer(LossScaleOptimizer).

Usage: mixed_precision_worker.py OUTPUT_DIR (under mpirun, or as one process).
The loss scale starts at 2**40, so the first steps overflow float16 and are
skipped; micro_shards=2 makes the result the same on 1 and 2 ranks. Each rank
writes rank<r>.json: the sha256 of its final weights, their dtypes, and the
scale and whether the step was skipped after every batch.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np

import minidl
import minidl_dist as dist
from minidl import mixed_precision
from minidl.callbacks import LambdaCallback
from minidl.datasets import digits
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD


def main(output):
    dist.init()
    (x, y), _ = digits.load_data()
    x, y = x[:512].reshape(-1, 64).astype(np.float32) / 16, y[:512]
    mixed_precision.set_global_policy('mixed_float16')
    minidl.set_seed(0)
    model = Sequential([Dense(32, activation='relu', input_shape=(64,)),
                        Dense(10, activation='softmax')])
    scaled = mixed_precision.LossScaleOptimizer(SGD(0.1, momentum=0.9), initial_scale=2 ** 40)
    optimizer = dist.DistributedOptimizer(scaled, micro_shards=2)
    model.compile(optimizer, 'sparse_categorical_crossentropy')
    steps = []
    record = LambdaCallback(on_batch_end=lambda batch, logs: steps.append(
        [optimizer.loss_scale, optimizer.last_step_skipped]))
    with np.errstate(all='ignore'):  # the overflowing steps
        model.fit(x, y, batch_size=64, epochs=2, verbose=0, shuffle=False, callbacks=[record])
    weights = model.get_weights()
    summary = {'digest': hashlib.sha256(b''.join(w.tobytes() for w in weights)).hexdigest(),
               'dtypes': sorted({str(w.dtype) for w in weights}), 'steps': steps,
               'iterations': optimizer.iterations}
    (pathlib.Path(output) / f'rank{dist.rank()}.json').write_text(json.dumps(summary))


if __name__ == '__main__':
    main(sys.argv[1])
