"""``preprocess_input`` and ``decode_predictions``, as each ``keras.applications`` family has them.

Each family module binds these to the convention of its weights:
:mod:`zoo.resnet` and :mod:`zoo.alexnet` to torchvision's ('torch': scale
to [0, 1], then subtract ImageNet's mean and divide by its standard
deviation per RGB channel), :mod:`zoo.resnet_cifar` to the glyph weights'
('unit': scale to [0, 1]).
"""

import json
import os

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
# Keras's 'caffe' mode: BGR order, ImageNet's mean pixel subtracted, no scaling.
CAFFE_MEAN_BGR = np.array([103.939, 116.779, 123.68], dtype=np.float32)

MODES = ('torch', 'tf', 'caffe', 'unit')


def preprocess_input(x, data_format=None, mode='torch'):
    """Scale a batch of images with pixel values 0-255 the way the weights expect.

    Args:
        x: Images, channels last, values 0-255 (any numeric dtype).
        data_format: 'channels_last' or None (the zoo builds channels-last
            models only).
        mode: 'torch' (x / 255, minus ImageNet's mean, over its standard
            deviation), 'tf' (x / 127.5 - 1), 'caffe' (RGB to BGR, minus
            ImageNet's mean pixel) or 'unit' (x / 255).

    Returns:
        A new float32 array; ``x`` is left as it was.
    """
    if data_format not in (None, 'channels_last'):
        raise ValueError(f'preprocess_input: the zoo\'s models are channels-last; got '
                         f'data_format={data_format!r}')
    if mode not in MODES:
        raise ValueError(f'preprocess_input: mode must be one of {MODES}, got {mode!r}')
    x = np.array(x, dtype=np.float32)
    if mode == 'unit':
        return x / 255
    if mode == 'tf':
        return x / 127.5 - 1
    if x.ndim < 1 or x.shape[-1] != 3:
        raise ValueError(f'preprocess_input: mode {mode!r} needs RGB images (last axis 3); '
                         f'got shape {x.shape}')
    if mode == 'caffe':
        return x[..., ::-1] - CAFFE_MEAN_BGR
    return (x / 255 - IMAGENET_MEAN) / IMAGENET_STD


def make_preprocess_input(mode):
    """``preprocess_input`` with ``mode`` as its default, for a family module."""
    def family_preprocess_input(x, data_format=None, mode=mode):
        return preprocess_input(x, data_format, mode)
    family_preprocess_input.__doc__ = preprocess_input.__doc__.replace(
        "mode: 'torch'", f"mode: {mode!r} by default; 'torch'", 1)
    return family_preprocess_input


def decode_predictions(preds, top=5, labels='imagenet'):
    """The ``top`` classes of each prediction, best first, as ``(id, name, score)`` tuples.

    Args:
        preds: Scores of shape (samples, classes).
        top: How many classes to return per sample.
        labels: 'glyphs' (the 52 letters of :mod:`minidl.datasets.glyphs`),
            'imagenet' (the 1,000 ImageNet classes, read from Keras's
            ``imagenet_class_index.json`` in ``~/.minidl/models`` or
            ``~/.keras/models``, which no package ships), 'auto' (the set
            whose size is the number of scores: the labels of the weights
            the model was loaded with), or a list of names.

    Returns:
        A list (one per sample) of lists of ``(class id, class name, score)``.
    """
    preds = np.asarray(preds)
    if labels == 'auto':
        labels = _labels_for(preds)
    names = class_names(labels)
    if preds.ndim != 2 or preds.shape[1] != len(names):
        raise ValueError(f'decode_predictions expects scores of shape (samples, '
                         f'{len(names)}) for these labels; got shape {preds.shape}')
    if labels == 'imagenet':
        ids, names = zip(*names)
    else:
        ids = [str(i) for i in range(len(names))]
    result = []
    for scores in preds:
        best = np.argsort(-scores, kind='stable')[:top]
        result.append([(ids[i], names[i], float(scores[i])) for i in best])
    return result


def make_decode_predictions(labels):
    """``decode_predictions`` with ``labels`` as its default, for a family module."""
    def family_decode_predictions(preds, top=5, labels=labels):
        return decode_predictions(preds, top, labels)
    family_decode_predictions.__doc__ = decode_predictions.__doc__
    return family_decode_predictions


def _labels_for(preds):
    """'glyphs' or 'imagenet', whichever has as many classes as ``preds`` has scores."""
    sizes = {52: 'glyphs', 1000: 'imagenet'}
    width = preds.shape[-1] if preds.ndim else None
    if width not in sizes:
        raise ValueError(f"decode_predictions: scores for {width} classes match no known label "
                         f"set (52 glyphs, 1,000 ImageNet classes); pass labels=[...] with a "
                         f"name for each class")
    return sizes[width]


def class_names(labels):
    """The names of a label set (for 'imagenet', ``(wnid, name)`` pairs)."""
    if isinstance(labels, (list, tuple)):
        return list(labels)
    if labels == 'glyphs':
        from minidl.datasets import glyphs
        return list(glyphs.LETTERS)
    if labels == 'imagenet':
        return _imagenet_names()
    raise ValueError(f"labels must be 'glyphs', 'imagenet' or a list of names, got {labels!r}")


def _imagenet_names():
    home = os.environ.get('MINIDL_HOME', os.path.join('~', '.minidl'))
    candidates = [os.path.join(home, 'models', 'imagenet_class_index.json'),
                  os.path.join('~', '.keras', 'models', 'imagenet_class_index.json')]
    for candidate in map(os.path.expanduser, candidates):
        if os.path.exists(candidate):
            with open(candidate, encoding='utf8') as file:
                index = json.load(file)
            return [tuple(index[str(i)]) for i in range(len(index))]
    raise FileNotFoundError(
        "decode_predictions(labels='imagenet') needs Keras's imagenet_class_index.json, "
        f'which no package ships; place it at {candidates[0]} (or {candidates[1]})')
