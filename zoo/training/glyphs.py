"""Train the zoo's registered glyph weights, bit for bit.

    python -m zoo.training.glyphs resnet20        # ~17 min on 2 idle cores
    python -m zoo.training.glyphs alexnet_small   # ~11 min on 2 idle cores

Each recipe trains on the 52 letters of :mod:`minidl.datasets.glyphs` in
the 16 training fonts (20 varied images of each letter in each font,
16,640 images), with a step schedule of the learning rate, then measures
the top-1 accuracy on the 5 fonts no model ever trains on (5,200 images),
writes ``<name>_glyphs.h5`` (weights only, Keras 2's layout) and prints its
SHA-256, the figures :mod:`zoo.registry` records. Everything random
(initial weights, dropout, the order of samples, the data's variations)
follows from the seed, so a rerun on the same kind of machine writes the
same bits; other CPUs may round differently (BLAS kernels differ).
"""

import argparse
import pathlib
import time

import minidl
from minidl.callbacks import LearningRateScheduler
from minidl.datasets import glyphs
from minidl.optimizers import SGD, Adam

import zoo
from zoo.training.digest import file_digest
from zoo.training.schedule import step_schedule

# AlexNet has no batch normalization, and SGD moved it off its initial loss
# only slowly; Adam trains it in a few epochs.
RECIPES = {
    'resnet20': {'build': lambda: zoo.ResNet20(input_shape=(32, 32, 1), classes=52),
                 'optimizer': lambda: SGD(0.1, momentum=0.9),
                 'epochs': 10, 'learning_rate': 0.1, 'decay_epochs': (6, 9)},
    'alexnet_small': {'build': lambda: zoo.AlexNet(variant='small', input_shape=(32, 32, 1),
                                                   classes=52),
                      'optimizer': lambda: Adam(1e-3),
                      'epochs': 12, 'learning_rate': 1e-3, 'decay_epochs': (8, 11)},
}
SEED = 0
SAMPLES_PER_FONT = 20
BATCH_SIZE = 128


def glyph_letters(samples_per_font=SAMPLES_PER_FONT):
    """``((x_train, y_train), (x_test, y_test))``: letters as (n, 32, 32, 1) floats in [0, 1]."""
    (x_train, y_train), (x_test, y_test) = glyphs.load_data('letters', samples_per_font, 32,
                                                            seed=SEED)
    return ((zoo.resnet_cifar.preprocess_input(x_train[..., None]), y_train),
            (zoo.resnet_cifar.preprocess_input(x_test[..., None]), y_test))


def train(name, output_dir, epochs=None, samples_per_font=SAMPLES_PER_FONT, verbose=2):
    """Train recipe ``name``, save its weights in ``output_dir``; returns (path, accuracy)."""
    recipe = RECIPES[name]
    epochs = recipe['epochs'] if epochs is None else epochs
    minidl.set_seed(SEED)
    (x_train, y_train), (x_test, y_test) = glyph_letters(samples_per_font)
    model = recipe['build']()
    model.compile(recipe['optimizer'](), 'sparse_categorical_crossentropy', metrics=['accuracy'])
    started = time.perf_counter()
    schedule = step_schedule(recipe['learning_rate'], recipe['decay_epochs'])
    model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=epochs, verbose=verbose,
              callbacks=[LearningRateScheduler(schedule)])
    minutes = (time.perf_counter() - started) / 60
    _, accuracy = model.evaluate(x_test, y_test, batch_size=256, verbose=0)
    path = pathlib.Path(output_dir) / f'{name}_glyphs.h5'
    model.save_weights(path)
    digest = file_digest(path)
    print(f'{name}: {epochs} epochs in {minutes:.1f} min; accuracy on the unseen fonts '
          f'{accuracy:.4f}; {path} sha256 {digest}')
    return path, accuracy


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('recipe', choices=sorted(RECIPES))
    parser.add_argument('--output', default=str(pathlib.Path(zoo.__file__).parent / 'weights'),
                        help='directory of the weight file (default: zoo/weights)')
    parser.add_argument('--epochs', type=int, default=None,
                        help='fewer epochs for a quick try (the registered file uses the default)')
    args = parser.parse_args(argv)
    pathlib.Path(args.output).mkdir(parents=True, exist_ok=True)
    train(args.recipe, args.output, args.epochs)


if __name__ == '__main__':
    main()
