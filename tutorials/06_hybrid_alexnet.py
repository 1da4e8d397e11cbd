"""Lesson 6: hybrid parallelism, or "one weird trick" for AlexNet.

Krizhevsky's observation (2014): in AlexNet the convolutions do most of the
computing with few weights, and the fully connected layers hold most of the
weights with little computing. So split the work two ways: the convolutions
data-parallel (every rank holds them whole and computes its share of each
batch, as in lesson 5), the large Dense layers model-parallel (every rank
holds 1/N of their columns and computes them for the whole global batch).

1. One argument makes a data-parallel script hybrid::

       dist.DistributedOptimizer(Adam(), model_parallel=['fc6', 'fc7'])

   ``model.summary()`` gets a Placement column: ``data-parallel``, or the
   columns this rank holds of a model-parallel layer (``0:2048/4096`` on
   rank 0 of 2, with AlexNet's 4096 units), or ``global batch`` for the
   layers after it.
2. Memory: each rank holds half of fc6's and fc7's weights and of Adam's
   two moments for them; the lesson prints ``dist.held_bytes(model)``.
   (Activations are not in it: from fc6 on, every rank holds the whole
   global batch's.)
3. Traffic: data parallelism sums every weight's gradient at every step,
   whatever the batch; hybrid sums only the convolutions' gradients, but
   moves the activations (and their gradients) of the global batch in and
   out of the model-parallel layers, so its traffic grows with the batch.
   The batch is the lever: hybrid wins while the batch's activations at the
   boundary are small against the Dense layers' weights.
4. Hybrid computes what data parallelism computes: each output column is
   the same dot product, on one rank, and only the order of float32 sums
   differs. After one step the largest weight difference is a few float32
   units in the last place (Adam moves each weight by its step, 2e-4, the
   way its gradient points: a gradient of the wrong sign would show as
   4e-4). Training then amplifies such differences: after the quick run's
   24 steps the weights differ by up to about 3e-3 (plain data parallelism
   on 2 ranks differs from one process as much: 5.3e-3 after 46 steps with
   the 4096-unit top); the held-out figures stay alike. Each mode repeats
   bit for bit for a given N (fixed-order sums); bitwise equality across
   modes and numbers of ranks is the invariant mode's (``micro_shards``).
5. ``save`` gathers the shards: the file is the ordinary Keras-layout file
   (Adam's moments included), and rank 0 loads it back in one process.

The network is the zoo's AlexNet ('slides' variant: four convolutions)
on the 8x8 digits enlarged to 64x64 (its smallest input is 63x63). The zoo
builds a flattened top only at 224x224, so the lesson adds AlexNet's top
itself: fc6 and fc7 of 4096 units (``--full``; the quick run halves them
to 2048, which still hold 70 % of the weights), then the classifier. It
leaves out the top's dropout: in the model-parallel part the ranks draw one
mask for the global batch, in data parallelism each rank draws its own
rows' masks, so the two runs of point 4 would differ by their masks, not
by rounding.

    mpirun -np 2 python -m minidl_dist tutorials/06_hybrid_alexnet.py [output directory] [--full]

N may be 1, 2, 4, ... (a divisor of the top's width). The files go to the
output directory (default ``demo_output``; rank 0 writes them). Without
``--full`` each mode trains one epoch on the first 768 images (24 steps)
with a top of 2048 units, and measures the traffic at batches of 32 and 256.
The quick mode took 39 s under ``mpirun -np 2`` on a 2-core AMD EPYC that
other work shared (load average 6.2), 2026-11-27. ``--full`` has AlexNet's
4096 units and trains 4 epochs on all 1,437 images (held-out accuracy
0.975), and measures the traffic at a batch of 4096, where hybrid sends more
than data parallelism.
"""

import argparse
import pathlib
import sys

import numpy as np

import minidl
import minidl_dist as dist
import zoo
from minidl import layers
from minidl.datasets import digits
from minidl.models import Model, load_model
from minidl.optimizers import Adam

# units: the width of fc6 and fc7; train_samples: the first this many training images
# (None: all 1,437). The quick run's top has a quarter of fc7's weights: 3 times faster.
QUICK = {'epochs': 1, 'units': 2048, 'train_samples': 768, 'traffic_batches': (32, 256)}
FULL = {'epochs': 4, 'units': 4096, 'train_samples': None, 'traffic_batches': (32, 4096)}
BATCH_SIZE = 32  # the global batch, small against fc7's units x units weights
MODEL_PARALLEL = ['fc6', 'fc7']
LEARNING_RATE = 2e-4
IMAGE_SIZE = 64  # the 'slides' AlexNet's smallest input is 63 x 63
EVALUATE_BATCH_SIZE = 120
MB = 1e6


def say(text):
    """Print on rank 0 only: N ranks would print everything N times."""
    if dist.rank() == 0:
        print(text, flush=True)


def enlarge(images):
    """8x8 digits (0-16) as IMAGE_SIZE x IMAGE_SIZE x 1 images in [0, 1], each pixel a block."""
    block = np.ones((IMAGE_SIZE // 8, IMAGE_SIZE // 8), dtype='float32')
    return np.kron(images.astype('float32') / 16, block)[..., None]


def alexnet(units):
    """The zoo's AlexNet body at 64x64, with AlexNet's top (without dropout) on it."""
    minidl.set_seed(0)  # both modes start from the same weights (rank 0's are broadcast)
    body = zoo.AlexNet(variant='slides', include_top=False,
                       input_shape=(IMAGE_SIZE, IMAGE_SIZE, 1))
    x = layers.Flatten(name='flatten')(body.output)
    x = layers.Dense(units, activation='relu', name='fc6')(x)
    x = layers.Dense(units, activation='relu', name='fc7')(x)
    outputs = layers.Dense(10, activation='softmax', name='predictions')(x)
    return Model(body.input, outputs, name='alexnet_slides')


def compiled_alexnet(units, model_parallel=None):
    """A fresh AlexNet, data-parallel or (given layer names) hybrid."""
    model = alexnet(units)
    # The one change: model_parallel=None is data parallelism, a list of names is hybrid.
    model.compile(optimizer=dist.DistributedOptimizer(Adam(LEARNING_RATE),
                                                      model_parallel=model_parallel),
                  loss='sparse_categorical_crossentropy', metrics=['accuracy'])
    return model


def bytes_per_step(model, x, y, batch_size):
    """Bytes this rank sends in one training step of ``batch_size`` samples."""
    repeated = np.arange(batch_size) % len(x)  # a batch larger than the data set repeats it
    before = dist.bytes_sent()
    model.fit(x[repeated], y[repeated], batch_size=batch_size, epochs=1, verbose=0)
    return dist.bytes_sent() - before


def show_traffic(models, x, y, batches):
    """Bytes per step at two batch sizes, and the batch at which the modes break even."""
    sent = {(name, batch): bytes_per_step(model, x, y, batch)
            for name, model in models.items() for batch in batches}
    for batch in batches:
        say(f'batch {batch}: bytes sent per step and rank: data-parallel '
            f'{sent["data-parallel", batch]}, hybrid {sent["hybrid", batch]}')
    if dist.size() == 1:
        say('one rank sends nothing: run the lesson under mpirun -np 2 to see the traffic')
        return
    small, large = batches
    per_sample = (sent['hybrid', large] - sent['hybrid', small]) / (large - small)
    fixed = sent['hybrid', small] - per_sample * small
    break_even = (sent['data-parallel', small] - fixed) / per_sample
    say(f'data parallelism sends every gradient, {sent["data-parallel", small] / MB:.1f} MB '
        f'at any batch; hybrid sends the convolutions\' gradients ({fixed / MB:.1f} MB) plus '
        f'{per_sample / 1e3:.1f} kB of activations and gradients per sample: they break even '
        f'at a batch of about {break_even:.0f}')


def largest_difference(models):
    """The largest difference between the two models' weights (gathered: every rank calls it)."""
    data_parallel, hybrid = (model.get_weights() for model in models.values())
    return max(float(np.abs(a - b).max()) for a, b in zip(data_parallel, hybrid))


def train(models, x_train, y_train, epochs):
    """One step, then ``epochs`` epochs, for each model; prints their weights' difference."""
    for model in models.values():
        model.fit(x_train[:BATCH_SIZE], y_train[:BATCH_SIZE], batch_size=BATCH_SIZE, verbose=0)
    after_one_step = largest_difference(models)
    for name, model in models.items():
        say(f'{name}: {epochs} epoch(s) of {len(x_train) // BATCH_SIZE} steps')
        model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=epochs, verbose=2)
    say(f'largest weight difference, hybrid against data-parallel: {after_one_step:.1e} '
        f'after one step, {largest_difference(models):.1e} after training')


def evaluate(models, x_test, y_test):
    """Held-out loss and accuracy of each model."""
    for name, model in models.items():
        loss, accuracy = model.evaluate(x_test, y_test, batch_size=EVALUATE_BATCH_SIZE,
                                        verbose=0)
        say(f'{name:>13}: held-out loss {loss:.4f}, accuracy {accuracy:.4f}')


def save_and_reload(model, output_dir, x_test):
    """Save the hybrid model from every rank (rank 0 writes); rank 0 loads it back alone."""
    path = output_dir / 'hybrid_alexnet.h5'
    model.save(path)  # gathers fc6's and fc7's columns (and Adam's moments) first
    weights = model.get_weights()
    # Collectives, like save: every rank takes part.
    predictions = model.predict(x_test, batch_size=EVALUATE_BATCH_SIZE)
    if dist.rank() != 0:
        return
    reloaded = load_model(path)  # an ordinary model with a plain Adam: one process
    same = all(np.array_equal(a, b) for a, b in zip(reloaded.get_weights(), weights))
    difference = np.abs(reloaded.predict(x_test, batch_size=EVALUATE_BATCH_SIZE)
                        - predictions).max()
    say(f'saved to {path}; reloaded in one process: same weights {same}, '
        f'largest difference of predictions {difference:.1e}')


def main(output_dir, full=False):
    dist.init()
    settings = FULL if full else QUICK
    output_dir = pathlib.Path(output_dir)
    if dist.rank() == 0:
        output_dir.mkdir(parents=True, exist_ok=True)
    (x_train, y_train), (x_test, y_test) = digits.load_data()
    x_train, y_train = x_train[:settings['train_samples']], y_train[:settings['train_samples']]
    x_train, x_test = enlarge(x_train), enlarge(x_test)
    say(f'{dist.size()} rank(s), global batch {BATCH_SIZE}, {len(x_train)} training digits at '
        f'{IMAGE_SIZE}x{IMAGE_SIZE}, fc6 and fc7 of {settings["units"]} units')

    say(f'\n-- the one change: model_parallel={MODEL_PARALLEL} --')
    models = {'data-parallel': compiled_alexnet(settings['units']),
              'hybrid': compiled_alexnet(settings['units'], model_parallel=MODEL_PARALLEL)}
    models['hybrid'].summary(print_fn=say)  # gathers the shards to count them: every rank calls

    say('\n-- the same training: data-parallel, then hybrid --')
    train(models, x_train, y_train, settings['epochs'])
    evaluate(models, x_test, y_test)

    say('\n-- weights and optimizer state held per rank --')
    held = {name: dist.held_bytes(model) for name, model in models.items()}
    say(f'held bytes per rank: data-parallel {held["data-parallel"]}, hybrid {held["hybrid"]} '
        f'({held["hybrid"] / held["data-parallel"]:.2f} times)')

    say('\n-- saving --')
    save_and_reload(models['hybrid'], output_dir, x_test)

    # Last, since these steps train the models further.
    say('\n-- traffic per step --')
    show_traffic(models, x_train, y_train, settings['traffic_batches'])


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the files go (default: demo_output; rank 0 writes)')
    parser.add_argument('--full', action='store_true',
                        help='all images, 4 epochs per mode, and traffic at a batch of 4096')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also through mpirun
    main(args.output_dir, args.full)
