"""Lesson 3: your own images, and a model with two outputs (the functional API).

Your data is usually a folder of image files, one sub-folder per class.
This lesson makes such a folder (glyph digits saved as PNG files, a stand-in
for your photos or scans), reads it back into arrays, and trains a model
that answers two questions about each image at once: which digit it is
(softmax over 10 classes) and whether its font is bold (a sigmoid) -- the
kind of model ``Sequential`` cannot express. It prints each output's test
accuracy on fonts the model never saw, and draws sample images (with the
bold output's answer) and the digit confusion matrix.

The images keep each font's own stroke weight (``glyphs.render(...,
vary_stroke=False)``): the glyph set's default thickens and thins strokes at
random, which makes a regular font look bold as often as not, and a 'bold'
label the images do not show cannot be learned (the bold output then stays
at the share of bold test images, 0.6).

    python tutorials/03_functional_own_data.py [output directory] [--full]

The files go to the output directory (default ``demo_output``). Without
``--full`` it trains for 12 epochs on a small folder, 2 images per digit and
font; ``--full`` uses 8 and 15 epochs. The quick mode took 12 s as one
process on a 2-core AMD EPYC that other work shared (load average 4.5),
2026-11-27.
"""

import argparse
import pathlib
import sys

import numpy as np

import minidl
from minidl.datasets import glyphs
from minidl.layers import (BatchNormalization, Conv2D, Dense, Dropout, GlobalAveragePooling2D,
                           Input, MaxPooling2D)
from minidl.models import Model

FULL = {'samples_per_font': 8, 'epochs': 15}
QUICK = {'samples_per_font': 2, 'epochs': 12}


def make_image_folder(root, samples_per_font):
    """Write glyph digits as ``root/{train,test}/<digit>/<font>_<n>.png`` (your data's place)."""
    import matplotlib.image
    for part, fonts in (('train', glyphs.TRAIN_FONTS), ('test', glyphs.TEST_FONTS)):
        for font in fonts:
            images, labels = glyphs.render(glyphs.DIGITS, [font], samples_per_font, 32,
                                           vary_stroke=False)  # bold stays bold
            for number, (image, label) in enumerate(zip(images, labels)):
                folder = root / part / str(label)
                folder.mkdir(parents=True, exist_ok=True)
                matplotlib.image.imsave(folder / f'{font[:-4]}_{number}.png', image,
                                        cmap='gray', vmin=0, vmax=255)


def read_image_folder(folder):
    """Arrays from ``folder/<class>/*.png``: images (n, height, width, 1) in [0, 1],
    class indices (sorted class-folder names), bold flags (from the file name), class names."""
    import matplotlib.image
    classes = sorted(path.name for path in folder.iterdir() if path.is_dir())
    images, labels, bold = [], [], []
    for index, name in enumerate(classes):
        for path in sorted((folder / name).glob('*.png')):
            images.append(matplotlib.image.imread(path)[..., 0])  # grey: R = G = B
            labels.append(index)
            bold.append('Bol' in path.name or 'cmb10' in path.name)
    return (np.stack(images)[..., None].astype('float32'), np.array(labels),
            np.array(bold, dtype='float32'), classes)


def two_output_model(classes):
    """A small CNN whose features feed two heads: the digit and 'bold or not'."""
    image = Input((32, 32, 1), name='image')
    x = image
    for filters in (16, 32, 64):
        x = Conv2D(filters, 3, padding='same', activation='relu', use_bias=False)(x)
        # Keras's default momentum 0.99 needs hundreds of steps before the moving
        # statistics (used by evaluate and predict) settle; this lesson takes few.
        x = BatchNormalization(momentum=0.9)(x)
        x = MaxPooling2D(2)(x)
    features = Dropout(0.3)(GlobalAveragePooling2D()(x))
    digit = Dense(classes, activation='softmax', name='digit')(features)
    bold = Dense(1, activation='sigmoid', name='bold')(features)
    return Model(image, [digit, bold], name='digit_and_weight')


def main(output_dir, full=False):
    settings = FULL if full else QUICK
    output_dir = pathlib.Path(output_dir)
    minidl.set_seed(0)
    folder = output_dir / 'glyph_digits'
    make_image_folder(folder, settings['samples_per_font'])
    x_train, digit_train, bold_train, classes = read_image_folder(folder / 'train')
    x_test, digit_test, bold_test, _ = read_image_folder(folder / 'test')
    print(f'read {len(x_train)} training and {len(x_test)} test images of {len(classes)} '
          f'classes from {folder}')

    model = two_output_model(len(classes))
    model.summary()
    # One loss per output, by name; the bold loss weighs half as much as the digit's.
    model.compile('adam', loss={'digit': 'sparse_categorical_crossentropy',
                                'bold': 'binary_crossentropy'},
                  loss_weights={'digit': 1.0, 'bold': 0.5}, metrics=['accuracy'])
    model.fit(x_train, {'digit': digit_train, 'bold': bold_train}, batch_size=32,
              epochs=settings['epochs'], verbose=2)
    results = model.evaluate(x_test, {'digit': digit_test, 'bold': bold_test},
                             verbose=0, return_dict=True)
    print(f"unseen fonts: digit accuracy {results['digit_accuracy']:.3f}, "
          f"bold accuracy {results['bold_accuracy']:.3f}")

    digit_scores, bold_scores = model.predict(x_test)
    count = len(classes)
    confusion = np.bincount(digit_test * count + digit_scores.argmax(axis=1),
                            minlength=count * count).reshape(count, count)
    draw(output_dir / 'own_data.png', x_test, digit_test, bold_test, bold_scores[:, 0],
         confusion, classes)
    return results


def draw(path, images, labels, bold, bold_scores, confusion, classes):
    """Two test images of each class, each titled with the bold output's answer (green
    when right), and the confusion matrix of the digit output."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    figure = Figure(figsize=(10, 5.5), layout='constrained')
    FigureCanvasAgg(figure)
    left, right = figure.subfigures(1, 2)
    rng = np.random.default_rng(0)  # two images of each digit, from two different fonts
    for label in range(len(classes)):
        chosen = rng.choice(np.flatnonzero(labels == label), 2, replace=False)
        for copy, index in enumerate(chosen):
            axes = left.add_subplot(len(classes) // 2, 4, 2 * label + copy + 1)
            axes.imshow(images[index, ..., 0], cmap='gray')
            axes.set_xticks([])
            axes.set_yticks([])
            said_bold = bold_scores[index] > 0.5
            axes.set_title(f'{"bold" if said_bold else "regular"} {bold_scores[index]:.2f}',
                           fontsize=8, color='green' if said_bold == bold[index] else 'red')
    left.suptitle('test images (unseen fonts) and the bold output', fontsize=10)
    axes = right.add_subplot()
    axes.imshow(confusion, cmap='Blues')
    for (row, column), count in np.ndenumerate(confusion):
        axes.text(column, row, count, ha='center', va='center', fontsize=7,
                  color='white' if count > confusion.max() / 2 else 'black')
    axes.set(xticks=range(len(classes)), yticks=range(len(classes)), xticklabels=classes,
             yticklabels=classes, xlabel='predicted digit', ylabel='true digit',
             title='confusion matrix, unseen fonts')
    figure.savefig(path, format='png')
    print(f'sample images and the confusion matrix drawn to {path}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('output_dir', nargs='?', default='demo_output', type=pathlib.Path,
                        help='where the files go (default: demo_output)')
    parser.add_argument('--full', action='store_true', help='more images and epochs')
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line at once, also into a pipe or log
    main(args.output_dir, args.full)
