"""The ``keras.applications`` contract every image family of the zoo follows.

A family's constructor (``zoo.ResNet50(...)``, ``zoo.AlexNet(...)``) takes
``include_top``, ``weights``, ``input_tensor``, ``input_shape``, ``pooling``
and ``classes`` with Keras 2's meaning and checks, builds its body on the
input this module gives it, and hands the body's last tensor to
:func:`finish`, which adds the top (or the pooling), makes the
:class:`~minidl.models.Model` and loads the weights. Images are
channels-last, as Keras's default ``image_data_format``.
"""

import os

from minidl import layers
from minidl.models import Model
from minidl.utils import get_source_inputs

from zoo import registry

POOLINGS = (None, 'avg', 'max')


def check_arguments(family, include_top, weights, input_shape, pooling, classes,
                    default_shape, default_classes, min_size, fixed_shape=False):
    """Keras 2's argument rules, with messages that say what to pass instead.

    Args:
        family: Model name for messages and the registry ('resnet20', ...).
        include_top, weights, input_shape, pooling, classes: As the constructor got
            them; ``classes=None`` means those of the registered weights, or
            ``default_classes``.
        default_shape: The input shape (height, width, channels) used when
            none is given (registered weights bring their own).
        default_classes: The classes used when none are given.
        min_size: Smallest height and width the body can reduce.
        fixed_shape: Whether the top only fits ``default_shape``'s height and
            width (a flattened top, as AlexNet's).

    Returns:
        ``(input_shape, weights, classes)``: the shape to build, the
        registered :class:`~zoo.registry.WeightFile` or a path or None, and
        the width of the classifier.
    """
    if pooling not in POOLINGS:
        raise ValueError(f'{family}: pooling must be None, "avg" or "max", got {pooling!r}')
    if classes is not None and (isinstance(classes, bool) or not isinstance(classes, int)
                                or classes < 1):
        raise ValueError(f'{family}: classes must be a positive integer, got {classes!r}')
    weight_file = None
    if weights is not None:
        if not isinstance(weights, (str, os.PathLike)):
            raise ValueError(f'{family}: weights must be None, a registered name or a file '
                             f'path, got {weights!r}')
        weight_file = registry.lookup(family, weights)
    if weight_file is None and weights is not None and not os.path.exists(weights):
        names = registry.names(family)
        raise ValueError(f'{family}: weights={weights!r} is neither a registered name '
                         f'({", ".join(names) or "none registered"}) nor an existing file')
    if weight_file is not None:
        default_shape, default_classes = weight_file.input_shape, weight_file.classes
        if include_top and classes not in (None, weight_file.classes):
            raise ValueError(f'{family}: weights={weights!r} have a top of '
                             f'{weight_file.classes} classes; with include_top=True, classes '
                             f'must be {weight_file.classes} (or pass include_top=False)')
    input_shape = _input_shape(family, input_shape, default_shape, min_size,
                               include_top and fixed_shape, weight_file)
    classes = default_classes if classes is None else classes
    return input_shape, weights if weight_file is None else weight_file, classes


def _input_shape(family, input_shape, default_shape, min_size, fixed_size, weight_file):
    if input_shape is None:
        return tuple(default_shape)
    input_shape = tuple(input_shape)
    if len(input_shape) != 3:
        raise ValueError(f'{family}: input_shape must be (height, width, channels), '
                         f'got {input_shape}')
    if fixed_size and input_shape[:2] != tuple(default_shape[:2]):
        raise ValueError(f'{family}: with include_top=True the input must be '
                         f'{default_shape[0]}x{default_shape[1]} (the top is flattened); got '
                         f'input_shape {input_shape}; pass include_top=False for other sizes')
    if weight_file is not None and input_shape[2] != default_shape[2]:
        raise ValueError(f'{family}: the registered weights take {default_shape[2]} '
                         f'channel(s); input_shape {input_shape} has {input_shape[2]}')
    if any(size is not None and size < min_size for size in input_shape[:2]):
        raise ValueError(f'{family}: height and width must be at least {min_size}, got '
                         f'input_shape {input_shape}')
    return input_shape


def model_input(name, input_tensor, input_shape):
    """``(inputs, x)``: the model's input tensor(s) and the tensor the body starts from.

    A new input is named ``<name>_input``, not numbered by how many inputs the
    process made before, so a model's weight file is the same in any process.
    """
    if input_tensor is None:
        tensor = layers.Input(input_shape, name=f'{name}_input')
        return tensor, tensor
    if not hasattr(input_tensor, 'node'):
        raise ValueError(f'input_tensor must be a tensor from minidl.layers.Input (or a '
                         f'layer called on one), got {input_tensor!r}')
    return source_inputs(input_tensor), input_tensor


def source_inputs(tensor):
    """The ``Input`` tensor(s) ``tensor`` is computed from: one tensor, or a list of several."""
    inputs = get_source_inputs(tensor)
    return inputs[0] if len(inputs) == 1 else inputs


def finish(name, inputs, x, include_top, pooling, classes, classifier_activation, weights,
           flatten_top=False):
    """Add the top or the pooling, make the model and load ``weights`` into it.

    Args:
        name: The model's name.
        inputs: From :func:`model_input`.
        x: The body's output, a 4-D feature map.
        include_top: Add the classifier 'predictions' (after global average
            pooling, or after 'flatten' with ``flatten_top``).
        pooling: Without the top: None (the feature map), 'avg' or 'max'.
        classes: Width of the classifier.
        classifier_activation: Activation of 'predictions' (None for logits).
        weights: From :func:`check_arguments`.
        flatten_top: Whether the body already ends in its own dense layers
            (then ``x`` is what 'predictions' reads).
    """
    if include_top:
        if not flatten_top:
            x = layers.GlobalAveragePooling2D(name='avg_pool')(x)
        x = layers.Dense(classes, activation=classifier_activation, name='predictions')(x)
    elif pooling == 'avg':
        x = layers.GlobalAveragePooling2D(name='avg_pool')(x)
    elif pooling == 'max':
        x = layers.GlobalMaxPooling2D(name='max_pool')(x)
    model = Model(inputs, x, name=name)
    if weights is not None:
        path = weights.fetch() if isinstance(weights, registry.WeightFile) else weights
        registry.load_by_name(model, path)
    return model
