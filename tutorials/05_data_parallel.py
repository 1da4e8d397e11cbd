"""Lesson 5: data-parallel training under mpirun.

The LeNet-style CNN of lesson 1, on the same 8x8 digits, trained by several
processes at once with ``minidl_dist``. Every rank holds the whole model and
computes the gradients of its share of each batch; the gradients are summed
over the ranks, so every rank applies the same update.

1. Three added lines (marked ``# +`` in the code) make a Keras script data-parallel::

       import minidl_dist as dist
       dist.init()
       model.compile(optimizer=dist.DistributedOptimizer(Adam()), ...)

   and it runs with ``mpirun -np N python -m minidl_dist script.py`` (or as
   a plain ``python script.py``, a job of one rank). The launcher ``python -m
   minidl_dist`` ends the whole job when any rank fails or leaves early.
2. ``batch_size`` is the global batch: with 2 ranks and ``batch_size=64``
   each rank computes 32 samples of every batch, so the training follows the
   same steps whatever N is. Each epoch's shuffle is drawn once and split, so
   every sample is used exactly once per epoch.
3. ``evaluate`` and ``predict`` cover the whole data, split over the ranks
   without padding, and sum over samples rather than average the ranks'
   means: the lesson recomputes the loss and accuracy with numpy from
   ``predict`` and finds the numbers ``evaluate`` gave, also where the ranks'
   shares differ (batches of 75 split 37 + 38).
4. Gradients are summed in a fixed order, so a run repeats bit for bit; but
   in the plain mode the weights depend on N: one rank sums a batch where
   two ranks add two halves, and each rank draws the dropout masks of its
   own half. With ``DistributedOptimizer(opt, micro_shards=4)`` each global
   batch is cut into 4 micro-shards computed alone and summed in one fixed
   tree: 1, 2 or 4 ranks give bitwise identical weights (compare the printed
   sha256 of ``-np 1`` and ``-np 2``; under ``-np 4`` the plain mode's
   parts are those micro-shards, and its digest is theirs too). The cost,
   printed as time per epoch: a rank runs several small passes instead of
   one larger one.
5. Only rank 0 prints (``fit``'s progress; this lesson prints through
   :func:`say`) and writes files: every rank calls ``model.save``, rank 0
   writes it, and the file loads back in one process.

    mpirun -np 2 python -m minidl_dist tutorials/05_data_parallel.py [output directory] [--full]

N may be 1 (or a plain ``python``), 2 or 4: the numbers of ranks that
divide the 4 micro-shards. The file goes to the output directory (default
``demo_output``).

Without ``--full`` each mode trains 15 epochs; ``--full`` trains 30. The
quick mode took 21 s under ``mpirun -np 2`` on a 2-core AMD EPYC that other
work shared (load average 5.4), 2026-11-27.
"""

import argparse
import hashlib
import math
import pathlib
import sys
import time

import numpy as np

import minidl
import minidl_dist as dist  # +
from minidl.datasets import digits
from minidl.layers import Conv2D, Dense, Dropout, Flatten, MaxPooling2D
from minidl.models import Sequential, load_model
from minidl.optimizers import Adam
from minidl.utils import to_categorical

FULL = {'epochs': 30}
QUICK = {'epochs': 15}
BATCH_SIZE = 64  # the global batch, whatever the number of ranks
MICRO_SHARDS = 4  # so 1, 2 or 4 ranks train bitwise alike
# 75 splits unevenly over 2 ranks (37 + 38), where a mean of the ranks' means would be off.
EVALUATE_BATCH_SIZE = 75


def say(text):
    """Print on rank 0 only, as ``fit`` does: N ranks would print everything N times."""
    if dist.rank() == 0:
        print(text, flush=True)


def weights_digest(model):
    """The sha256 of all weights' bytes: equal digests mean bitwise equal weights."""
    return hashlib.sha256(b''.join(weight.tobytes() for weight in model.get_weights())).hexdigest()


def lenet():
    minidl.set_seed(0)  # every rank builds the same model; fit broadcasts rank 0's anyway
    return Sequential([
        Conv2D(16, 3, padding='same', activation='relu', input_shape=(8, 8, 1)),
        MaxPooling2D(2),
        Conv2D(32, 3, padding='same', activation='relu'),
        MaxPooling2D(2),
        Flatten(),
        Dense(64, activation='relu'),
        Dropout(0.3),  # each micro-shard draws its own mask: the invariant mode keeps dropout
        Dense(10, activation='softmax'),
    ])


def train(x_train, y_train, epochs, micro_shards=None):
    """A fresh model trained data-parallel; returns it and the seconds per epoch."""
    model = lenet()
    model.compile(optimizer=dist.DistributedOptimizer(Adam(), micro_shards=micro_shards),  # +
                  loss='categorical_crossentropy', metrics=['accuracy'])
    if micro_shards is not None:  # fit's lines were shown once: here a line says what runs
        say(f'training {epochs} epochs in {micro_shards} micro-shards per batch...')
    start = time.perf_counter()
    model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=epochs,
              verbose=2 if micro_shards is None else 0)
    return model, (time.perf_counter() - start) / epochs


def show_global_batch(model, samples):
    """Print which rank computes which samples of a global batch."""
    # The strategy that DistributedOptimizer attached answers for this rank; gather all answers.
    parts = dist.allgather(np.array([(dist.rank(), part, start, stop) for part, start, stop
                                     in model.optimizer.strategy.parts(BATCH_SIZE)]))
    say(f'a global batch of {BATCH_SIZE} samples on {dist.size()} rank(s): ' + ', '.join(
        f'part {part} = samples {start}:{stop} on rank {rank}'
        for rank, part, start, stop in parts))
    batches = math.ceil(samples / BATCH_SIZE)
    say(f'an epoch: {samples} samples in {batches} global batches (the last of '
        f'{samples - (batches - 1) * BATCH_SIZE}), each sample in exactly one of them')


def check_evaluate(model, x_test, y_test):
    """``evaluate`` next to the same loss and accuracy recomputed with numpy from ``predict``."""
    loss, accuracy = model.evaluate(x_test, y_test, batch_size=EVALUATE_BATCH_SIZE, verbose=0)
    # predict gathers every rank's rows: all the samples, in order, on every rank.
    probabilities = model.predict(x_test, batch_size=EVALUATE_BATCH_SIZE)
    labels = y_test.argmax(axis=1)
    # Cross-entropy of the true class in float64, by its definition; the floor only
    # keeps the logarithm finite should a probability round to zero.
    true_class = probabilities[np.arange(len(labels)), labels].astype(np.float64)
    numpy_loss = float(-np.log(np.maximum(true_class, np.finfo(np.float64).tiny)).mean())
    numpy_accuracy = float((probabilities.argmax(axis=1) == labels).mean())
    say(f'evaluate over {len(labels)} test samples: loss {loss:.6f}, accuracy {accuracy:.6f}')
    say(f'numpy, from predict:           loss {numpy_loss:.6f}, accuracy {numpy_accuracy:.6f}')
    return {'loss': loss, 'accuracy': accuracy, 'numpy_loss': numpy_loss,
            'numpy_accuracy': numpy_accuracy}


def save_and_reload(model, output_dir, x_test):
    """Save from every rank (rank 0 writes); rank 0 loads the file back in one process."""
    path = output_dir / 'data_parallel_digits.h5'
    model.save(path)
    predictions = model.predict(x_test)  # a collective: every rank must take part
    if dist.rank() != 0:
        return
    reloaded = load_model(path)  # a plain Adam inside: predict runs in this process alone
    same = weights_digest(reloaded) == weights_digest(model)
    difference = np.abs(reloaded.predict(x_test) - predictions).max()
    say(f'saved to {path}; reloaded in one process: same weights {same}, '
        f'largest difference of predictions {difference:.1e}')


def main(output_dir, full=False):
    dist.init()  # +
    settings = FULL if full else QUICK
    output_dir = pathlib.Path(output_dir)
    if dist.rank() == 0:
        output_dir.mkdir(parents=True, exist_ok=True)
    (x_train, y_train), (x_test, y_test) = digits.load_data()
    x_train = x_train[..., None].astype('float32') / 16
    x_test = x_test[..., None].astype('float32') / 16
    y_train, y_test = to_categorical(y_train, 10), to_categorical(y_test, 10)
    say(f'{dist.size()} rank(s), global batch {BATCH_SIZE}')

    say('\n-- plain data parallelism --')
    plain, plain_seconds = train(x_train, y_train, settings['epochs'])
    show_global_batch(plain, len(x_train))
    evaluation = check_evaluate(plain, x_test, y_test)
    say(f'plain weights sha256 {weights_digest(plain)}')
    save_and_reload(plain, output_dir, x_test)

    say(f'\n-- invariant mode, micro_shards={MICRO_SHARDS} --')
    invariant, invariant_seconds = train(x_train, y_train, settings['epochs'], MICRO_SHARDS)
    show_global_batch(invariant, len(x_train))
    invariant_loss, invariant_accuracy = invariant.evaluate(
        x_test, y_test, batch_size=EVALUATE_BATCH_SIZE, verbose=0)
    say(f'evaluate: loss {invariant_loss:.6f}, accuracy {invariant_accuracy:.6f}')
    say(f'invariant weights sha256 {weights_digest(invariant)}')
    say(f'time per epoch on {dist.size()} rank(s): plain {plain_seconds:.3f} s, invariant '
        f'{invariant_seconds:.3f} s ({invariant_seconds / plain_seconds:.2f} times)')
    return {'plain': evaluation, 'invariant_accuracy': invariant_accuracy,
            'seconds_per_epoch': (plain_seconds, invariant_seconds)}


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the files go (default: demo_output; rank 0 writes)')
    parser.add_argument('--full', action='store_true', help='30 epochs per mode')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also through mpirun
    main(args.output_dir, args.full)
