"""Runs across fake hosts (minidl_dist.fakehosts). Usage: multihost_worker.py MODE OUTPUT ...

- probe OUTPUT INTERFACE: each rank writes rank<r>.json: its rank, local
  rank and size, host name, the bytes counted for one sum of 4,092 float32
  values, and the bytes its host's INTERFACE sent (from the kernel's
  counters) during a sum of 4 MiB;
- train OUTPUT EPOCHS [PAUSE_EPOCH PAUSE_BATCH]: fit_worker's convnet in the
  invariant mode (micro_shards=4), a checkpoint-<epoch>.h5 per epoch; with a
  pause, the last rank writes OUTPUT/paused before that batch (epoch and
  batch from 0) and waits for OUTPUT/go (the test makes its fault meanwhile);
  rank 0 writes result.json (weights' sha256, losses). Run as one plain
  process it is the reference;
- resume OUTPUT EPOCHS CHECKPOINT DONE: load CHECKPOINT (written after
  epoch DONE), train on to EPOCHS in the same mode, write result.json.
"""

import json
import os
import pathlib
import socket
import sys
import time

import numpy as np

import minidl_dist as dist
from fit_worker import convnet, data, weights_digest
from minidl.callbacks import Callback, ModelCheckpoint
from minidl.models import load_model
from minidl.optimizers import SGD
from minidl_dist.allreduce import Reducer
from minidl_dist.comm import world

BATCH = 32


class PauseOnLastRank(Callback):
    """The last rank stops before one batch until the test says go."""

    def __init__(self, output, epoch, batch):
        super().__init__()
        self.output, self.at, self.epoch = output, (epoch, batch), None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_batch_begin(self, batch, logs=None):
        if (self.epoch, batch) == self.at and dist.rank() == dist.size() - 1:
            (self.output / 'paused').write_text(str(os.getpid()))
            deadline = time.monotonic() + 60
            while not (self.output / 'go').exists() and time.monotonic() < deadline:
                time.sleep(0.01)


def probe(output, interface):
    comm = world()
    before = dist.bytes_sent()
    Reducer(comm).sum_(np.ones(4092, np.float32))
    sent = dist.bytes_sent() - before
    counter = pathlib.Path(f'/sys/class/net/{interface}/statistics/tx_bytes')
    comm.Barrier()
    link_before = int(counter.read_text())
    total = Reducer(comm).sum_(np.ones(1 << 20, np.float32))
    comm.Barrier()
    link_sent = int(counter.read_text()) - link_before
    report = {'rank': dist.rank(), 'local_rank': dist.local_rank(),
              'local_size': dist.local_size(), 'host': socket.gethostname(),
              'bytes_sent_for_4092': sent, 'link_bytes_for_4_mib': link_sent,
              'sum_right': bool((total == dist.size()).all())}
    (output / f'rank{dist.rank()}.json').write_text(json.dumps(report))


def train(output, epochs, pause=None, checkpoint=None, first=0):
    x, y = data(100, 0)
    if checkpoint is None:
        model, optimizer = convnet(4), SGD(0.1, momentum=0.9)
    else:  # the optimizer as saved, its momentum included
        model = load_model(checkpoint)
        optimizer = model.optimizer
    model.compile(dist.DistributedOptimizer(optimizer, micro_shards=4),
                  'categorical_crossentropy')
    callbacks = [ModelCheckpoint(str(output / 'checkpoint-{epoch:02d}.h5'))]
    if pause:
        callbacks.append(PauseOnLastRank(output, *pause))
    world().Barrier()  # every rank has imported and built: no collective waits for slow imports
    history = model.fit(x, y, batch_size=BATCH, epochs=epochs, initial_epoch=first, verbose=0,
                        callbacks=callbacks)
    digest = weights_digest(model)
    if dist.rank() == 0:
        (output / 'result.json').write_text(json.dumps({'digest': digest,
                                                        'loss': history.history['loss']}))


def main(mode, output, *args):
    dist.init()
    output = pathlib.Path(output)
    if mode == 'probe':
        probe(output, args[0])
    elif mode == 'train':
        pause = tuple(map(int, args[1:3])) if len(args) > 1 else None
        train(output, int(args[0]), pause)
    else:
        train(output, int(args[0]), checkpoint=args[1], first=int(args[2]))


if __name__ == '__main__':
    main(*sys.argv[1:])
