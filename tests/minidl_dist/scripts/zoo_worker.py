"""Fine-tunes a zoo ResNet-20 (a frozen base and a new head) with minidl_dist.

Usage: zoo_worker.py OUTPUT_DIR, under mpirun or as one plain process (the
reference), with DistributedOptimizer(micro_shards=4). Each rank writes
rank<r>.json with the sha256 of its weights and the history.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np

import minidl
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import SGD

import minidl_dist as dist
import zoo


def main(output):
    dist.init()
    minidl.set_seed(5)
    rng = np.random.default_rng(0)
    x = rng.random((32, 8, 8, 1), dtype=np.float32)
    y = (x.mean(axis=(1, 2, 3)) > 0.5).astype('int64')
    base = zoo.ResNet20(include_top=False, pooling='avg', input_shape=(8, 8, 1))
    for layer in base.layers:  # the top block trains, the rest stays as it is
        layer.trainable = layer.name.startswith('conv4_block3')
    model = Sequential([base, Dense(2, activation='softmax')])
    model.compile(dist.DistributedOptimizer(SGD(0.05, momentum=0.9), micro_shards=4),
                  'sparse_categorical_crossentropy')
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    digest = hashlib.sha256(b''.join(w.tobytes() for w in model.get_weights())).hexdigest()
    pathlib.Path(output, f'rank{dist.rank()}.json').write_text(
        json.dumps({'digest': digest, 'loss': history.history['loss']}))


if __name__ == '__main__':
    main(sys.argv[1])
