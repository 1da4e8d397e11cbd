"""ImageNet conventions Keras 2's applications share: preprocessing, labels, the weights argument.

Nothing is downloaded: where Keras 2 would fetch a file (ImageNet weights,
the class index), minidl reads it from Keras's own cache
(``~/.keras/models``) if it is there, and otherwise says which file to get
and how to pass it.
"""

import json
import os

import numpy as np

from minidl import backend as K

# The ImageNet mean pixel in BGR order, which 'caffe'-style models subtract.
_CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)
# The mean and standard deviation per RGB channel that 'torch'-style models use.
_TORCH_MEAN_RGB, _TORCH_STD_RGB = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
_WEIGHTS_RELEASE = 'https://github.com/fchollet/deep-learning-models/releases/download/v0.1/'
_CLASS_INDEX_FILE = 'imagenet_class_index.json'


def keras_cache_path(filename):
    """Where Keras 2 keeps a downloaded file of ``keras.applications``."""
    return os.path.join(os.path.expanduser('~'), '.keras', 'models', filename)


def preprocess_input(x, data_format=None, mode='caffe', **kwargs):
    """Prepare a batch of images (0-255 RGB values) the way an ImageNet model was trained on.

    Args:
        x: Images: a numpy array (3-D or 4-D), a Tensor or a symbolic tensor.
        data_format: 'channels_last' or 'channels_first'; by default
            ``K.image_data_format()``.
        mode: 'caffe' (RGB to BGR, then the ImageNet mean pixel subtracted;
            VGG's and ResNet50's), 'tf' (scaled to -1..1) or 'torch'
            (scaled to 0..1, then normalized per channel).
        **kwargs: Keras 2.2.4's backend and module arguments, ignored.

    Returns:
        The preprocessed images, of the type given (integer arrays become
        ``floatx()``); the argument itself is not modified.
    """
    data_format = K.normalize_data_format(data_format)
    if mode not in ('caffe', 'tf', 'torch'):
        raise ValueError(f"preprocess_input: mode must be 'caffe', 'tf' or 'torch', got {mode!r}")
    if isinstance(x, np.ndarray) or not K.is_tensor(x):
        x = np.asarray(x)
        if x.dtype.kind != 'f':
            x = x.astype(K.floatx())
    channel_axis = -1 if data_format == 'channels_last' else (0 if K.ndim(x) == 3 else 1)
    if mode == 'tf':
        return x / 127.5 - 1.
    if mode == 'torch':
        mean, std = _TORCH_MEAN_RGB, _TORCH_STD_RGB
        x = x / 255.
    else:
        mean, std = _CAFFE_MEAN_BGR, None
        x = x[..., ::-1] if channel_axis == -1 else _reverse(x, channel_axis)
    shape = [1] * K.ndim(x)
    shape[channel_axis] = 3
    x = x - np.reshape(np.asarray(mean, dtype=x.dtype), shape)
    if std is not None:
        x = x / np.reshape(np.asarray(std, dtype=x.dtype), shape)
    return x


def _reverse(x, axis):
    if isinstance(x, np.ndarray):
        return np.flip(x, axis)
    return K.reverse(x, axis)


def decode_predictions(preds, top=5, **kwargs):
    """The ``top`` ImageNet classes of each row of ``preds``: ``(class_id, name, score)`` tuples.

    Reads ImageNet's class index from Keras's cache (``~/.keras/models/
    imagenet_class_index.json``), as minidl downloads nothing.

    Raises:
        ValueError: If ``preds`` is not of shape (samples, 1000).
        FileNotFoundError: If the class index is not in Keras's cache.
    """
    preds = np.asarray(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError(f'decode_predictions expects a batch of ImageNet predictions, of shape '
                         f'(samples, 1000); got {preds.shape}')
    path = keras_cache_path(_CLASS_INDEX_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f'decode_predictions needs ImageNet\'s class names, {_CLASS_INDEX_FILE}, which '
            f'minidl does not download; put it at {path} (Keras 2 fetched it from '
            f'https://s3.amazonaws.com/deep-learning-models/image-models/{_CLASS_INDEX_FILE})')
    with open(path, encoding='utf-8') as file:
        index = json.load(file)
    results = []
    for row in preds:
        best = np.argsort(row)[::-1][:top]
        results.append([(*index[str(i)], float(row[i])) for i in best])
    return results


def check_weights(model_name, weights, include_top, classes, imagenet_file):
    """Keras 2's rules for the ``weights`` argument; the file to load, or None.

    Args:
        model_name: For messages ('vgg16').
        weights: None, 'imagenet' or a file path.
        include_top: Whether the model has its classifier.
        classes: The classifier's width.
        imagenet_file: The stem of the ImageNet weights' file name in Keras 2
            (``_notop.h5`` is added for the model without its top).

    Returns:
        The path to load, or None for random initialization.

    Raises:
        ValueError: For other values, a top of other than 1000 classes with
            ImageNet weights, or ImageNet weights not in Keras's cache (the
            message says where to get the file and how to pass it).
    """
    if weights is None:
        return None
    if not isinstance(weights, (str, os.PathLike)):
        raise ValueError(f'{model_name}: weights must be None (random initialization), '
                         f"'imagenet' or the path of a weights file, got {weights!r}")
    if weights != 'imagenet':
        if not os.path.exists(weights):
            raise ValueError(f'{model_name}: weights={weights!r} is neither None, \'imagenet\' '
                             f'nor an existing weights file')
        return os.fspath(weights)
    if include_top and classes != 1000:
        raise ValueError(f"{model_name}: with weights='imagenet' and include_top=True, classes "
                         f'must be 1000, got {classes}')
    filename = imagenet_file + ('.h5' if include_top else '_notop.h5')
    cached = keras_cache_path(filename)
    if os.path.exists(cached):
        return cached
    raise ValueError(
        f"{model_name}: weights='imagenet' would download {filename}, and minidl downloads "
        f'nothing. Get the file where you can (Keras 2 fetched it from '
        f'{_WEIGHTS_RELEASE}{filename}) and pass its path instead, '
        f"e.g. weights='/path/to/{filename}' (a Keras 2 weights file loads as it is; minidl "
        f'also finds it at {cached}); or pass weights=None for random weights')


def input_shape_for(model_name, input_shape, default_size, min_size, require_flatten,
                    pretrained):
    """The shape of one image the model is built for, by Keras 2's rules.

    Args:
        model_name: For messages.
        input_shape: The shape asked for, or None.
        default_size: The side of the images the model was designed for.
        min_size: The smallest side the model can reduce.
        require_flatten: Whether the top flattens the features (then the
            sides must be known).
        pretrained: Whether weights will be loaded: the images then have 3
            channels.
    """
    channels_first = K.image_data_format() == 'channels_first'
    if input_shape is None:
        side = default_size if require_flatten else None
        return (3, side, side) if channels_first else (side, side, 3)
    input_shape = tuple(input_shape)
    if len(input_shape) != 3:
        raise ValueError(f'{model_name}: input_shape must have 3 entries (rows, columns and '
                         f'channels), got {input_shape}')
    channels = input_shape[0] if channels_first else input_shape[-1]
    sides = input_shape[1:] if channels_first else input_shape[:2]
    if pretrained and channels != 3:
        raise ValueError(f'{model_name}: pretrained weights take images of 3 channels; '
                         f'got input_shape={input_shape}')
    if any(side is not None and side < min_size for side in sides):
        raise ValueError(f'{model_name}: input size must be at least {min_size}x{min_size}; '
                         f'got input_shape={input_shape}')
    if require_flatten and None in sides:
        raise ValueError(f'{model_name}: with include_top=True the input size must be known '
                         f'(the top flattens the features); got input_shape={input_shape}')
    return input_shape

