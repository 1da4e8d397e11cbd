"""Lesson 2: transfer learning with a zoo model.

``zoo.ResNet20(weights='glyphs')`` was trained on the 52 letters of the
glyphs set. Here it learns the ten digits, which it has never seen, from
10 images per class:

1. the pretrained base frozen (``trainable = False``: its weights and its
   batch-norm statistics), a new softmax head trained on its features;
2. then the top block (stage conv4) unfrozen and trained further at a ten
   times lower learning rate.

The same network trained from scratch, on the same images, for the same
number of epochs with the same learning rates, is the baseline. Two tasks:
printed digits in the 5 fonts the base never saw, and scikit-learn's
handwritten 8x8 digits scaled to 32x32. The lesson prints accuracy with
and without pretraining, mean and spread over seeds (each seed draws other
training images and other initial weights), and draws sample images and the
curves of one seed.

    python tutorials/02_transfer_learning.py [output directory] [--full]

It also draws the ResNet-20 base with ``plot_model`` (its skip connections
beside the blocks they bypass). The files go to the output directory
(default ``demo_output``). Without ``--full`` it runs the printed digits
only, one seed, 4 + 2 epochs. The quick mode took 19 s as one process on a
2-core AMD EPYC that other work shared (load average 3.9), 2026-11-27. The
README's table is the ``--full`` run (5 seeds, both tasks, about 18 minutes
on 2 cores).
"""

import argparse
import pathlib
import sys

import numpy as np

import minidl
import zoo
from minidl.datasets import digits, glyphs
from minidl.callbacks import LambdaCallback
from minidl.layers import Dense
from minidl.models import Sequential
from minidl.optimizers import Adam
from minidl.utils import plot_model

PER_CLASS = 10
# printed_samples: images of each digit in each font to draw from (the unseen
# fonts' ones are the test set); tasks: how many of the two tasks to run.
FULL = {'seeds': 5, 'head_epochs': 30, 'tune_epochs': 30, 'printed_samples': 10, 'tasks': 2}
QUICK = {'seeds': 1, 'head_epochs': 4, 'tune_epochs': 2, 'printed_samples': 2, 'tasks': 1}


def printed_digits(seed, samples_per_font):
    """Digits in the 16 training fonts (PER_CLASS per class) and in the 5 unseen fonts."""
    (x_train, y_train), (x_test, y_test) = glyphs.load_data('digits', samples_per_font,
                                                            seed=seed)
    return few_per_class(x_train, y_train, seed), (x_test, y_test)


def handwritten_digits(seed):
    """scikit-learn's 8x8 digits, 0-16, scaled 3x to 24x24 and framed to 32x32 like glyphs."""
    (x_train, y_train), (x_test, y_test) = digits.load_data(seed=seed)

    def to_glyph_size(images):
        images = np.kron(images.astype(np.float32) * (255 / 16), np.ones((1, 3, 3), np.float32))
        return np.pad(images, ((0, 0), (4, 4), (4, 4))).astype(np.uint8)
    return few_per_class(to_glyph_size(x_train), y_train, seed), (to_glyph_size(x_test), y_test)


def few_per_class(x, y, seed):
    """PER_CLASS samples of each class, drawn by ``seed``."""
    rng = np.random.default_rng(seed)
    chosen = np.concatenate([rng.choice(np.flatnonzero(y == k), PER_CLASS, replace=False)
                             for k in range(10)])
    return x[chosen], y[chosen]


def as_input(images):
    return zoo.resnet_cifar.preprocess_input(images[..., None])


def progress(phase, epochs):
    """A line every 5 epochs and at the end of a phase (fit's verbose=2 would print two
    per epoch, many for 20 runs)."""
    def report(epoch, logs):
        if (epoch + 1) % 5 == 0 or epoch + 1 == epochs:
            print(f'    {phase}, epoch {epoch + 1}/{epochs}: training loss {logs["loss"]:.3f}, '
                  f'accuracy {logs["accuracy"]:.3f}')
    return LambdaCallback(on_epoch_end=report)


def train(data, pretrained, head_epochs, tune_epochs, seed, curve=False):
    """Train a ResNet-20 base with a new head; returns (test accuracy, accuracy per epoch
    on the test images if ``curve``, drawn only, never used to choose anything)."""
    (x_train, y_train), (x_test, y_test) = data
    minidl.set_seed(seed)
    base = zoo.ResNet20(include_top=False, pooling='avg', input_shape=(32, 32, 1),
                        weights='glyphs' if pretrained else None)
    model = Sequential([base, Dense(10, activation='softmax', name='digit')])
    base.trainable = not pretrained  # 1. a frozen pretrained base, or all of it from scratch
    accuracies = []
    for phase, epochs, learning_rate in (('head', head_epochs, 1e-2),
                                         ('top block', tune_epochs, 1e-3)):
        model.compile(Adam(learning_rate), 'sparse_categorical_crossentropy', ['accuracy'])
        history = model.fit(as_input(x_train), y_train, batch_size=16, epochs=epochs,
                            validation_data=(as_input(x_test), y_test) if curve else None,
                            verbose=0, callbacks=[progress(phase, epochs)])
        accuracies += history.history.get('val_accuracy', [])
        if pretrained:  # 2. unfreeze the top block for the second phase
            base.trainable = True
            for layer in base.layers:
                layer.trainable = layer.name.startswith('conv4_')
    return model.evaluate(as_input(x_test), y_test, verbose=0)[1], accuracies


def main(output_dir, full=False):
    settings = FULL if full else QUICK
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    draw_network(output_dir / 'resnet20.png')
    tasks = {'printed digits, unseen fonts':
             lambda seed: printed_digits(seed, settings['printed_samples']),
             'handwritten digits (scikit-learn)': handwritten_digits}
    tasks = dict(list(tasks.items())[:settings['tasks']])
    results, curves, samples = {}, {}, {}
    for task, load in tasks.items():
        for seed in range(settings['seeds']):
            data = load(seed)
            samples.setdefault(task, data[0][0])
            for pretrained in (True, False):
                print(f'{task}, seed {seed}, {"pretrained" if pretrained else "scratch"}:')
                accuracy, curve = train(data, pretrained, settings['head_epochs'],
                                        settings['tune_epochs'], seed, curve=seed == 0)
                results.setdefault((task, pretrained), []).append(accuracy)
                if curve:
                    curves[task, pretrained] = curve
                print(f'    test accuracy {accuracy:.3f}')
    print(f'\nResNet-20, {PER_CLASS} training images per class, {settings["head_epochs"]} + '
          f'{settings["tune_epochs"]} epochs, {settings["seeds"]} seed(s): test accuracy, '
          f'mean ± standard deviation')
    print('| task | pretrained on glyph letters | from scratch |')
    print('|---|---:|---:|')
    for task in tasks:
        cells = [results[task, pretrained] for pretrained in (True, False)]
        print(f'| {task} | ' + ' | '.join(f'{np.mean(c):.3f} ± {np.std(c):.3f}' for c in cells)
              + ' |')
    draw(output_dir / 'transfer_learning.png', samples, curves, settings['head_epochs'])
    return {key: float(np.mean(value)) for key, value in results.items()}


def draw(path, samples, curves, head_epochs):
    """One row per task: a training image of each digit, and seed 0's test accuracy per
    epoch with and without pretraining."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    figure = Figure(figsize=(10, 3.4 * len(samples)), layout='constrained')
    FigureCanvasAgg(figure)
    rows = figure.subfigures(len(samples), 1, squeeze=False)[:, 0]
    for row, (task, images) in zip(rows, samples.items()):
        pictures, plot = row.subfigures(1, 2, width_ratios=(1, 1.3))
        for digit in range(10):
            axes = pictures.add_subplot(2, 5, digit + 1)
            axes.imshow(images[digit * PER_CLASS], cmap='gray')
            axes.set_axis_off()
        pictures.suptitle(f'{task}: training images', fontsize=10)
        axes = plot.add_subplot()
        for pretrained in (True, False):
            curve = curves[task, pretrained]
            axes.plot(range(1, len(curve) + 1), curve, marker='o' if len(curve) <= 15 else None,
                      markersize=3,
                      label='pretrained on glyph letters' if pretrained else 'from scratch')
        axes.axvline(head_epochs + 0.5, color='gray', linestyle=':', label='top block unfrozen')
        axes.set(title=f'{task}: test accuracy per epoch (seed 0)', xlabel='epoch',
                 ylabel='test accuracy', ylim=(0, 1))
        axes.title.set_fontsize(10)
        axes.legend(fontsize='small', loc='best')
    figure.savefig(path, format='png')
    print(f'sample images and curves drawn to {path}')


def draw_network(path):
    """The ResNet-20 base as plot_model draws it: the stages' blocks and their skip
    connections (layer names say the stage: conv4_ is the block unfrozen in phase 2)."""
    base = zoo.ResNet20(include_top=False, pooling='avg', input_shape=(32, 32, 1), weights=None)
    plot_model(base, path)
    print(f'the ResNet-20 base drawn to {path}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the files go (default: demo_output)')
    parser.add_argument('--full', action='store_true', help='5 seeds and all epochs')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also into a pipe or log
    main(args.output_dir, args.full)
