"""ResNet-20/32/44/56/110 for 32x32 images (He et al. 2015, §4.2).

``6n + 2`` layers: a 3x3 convolution of 16 filters, three stages of ``n``
basic blocks of 16, 32 and 64 filters (the first block of the second and
third stage halves the size), global average pooling and the classifier.
Where the shape changes, the shortcut is a 1x1 convolution of stride 2
followed by batch normalization (the paper's option B, benchmark W3);
everywhere else it is the identity. Layer names are those of
:mod:`zoo.resnet` (stages conv2 to conv4).

Registered weights: ``weights='glyphs'``, trained on the 52 letters of
:mod:`minidl.datasets.glyphs` (32x32 grey images, one channel, values
scaled to [0, 1] by :func:`preprocess_input`): 98.50 % top-1 on the 5,200
letters of the 5 fonts training never saw (:mod:`zoo.registry`).
"""

from zoo import application
from zoo.preprocessing import make_decode_predictions, make_preprocess_input
from zoo.resnet import basic_block, conv_bn, stage

preprocess_input = make_preprocess_input('unit')
decode_predictions = make_decode_predictions('glyphs')

_DEPTHS = (20, 32, 44, 56, 110)


def ResNetCifar(depth, include_top=True, weights=None, input_tensor=None, input_shape=None,
                pooling=None, classes=None, classifier_activation='softmax'):
    """A CIFAR ResNet of ``depth`` 20, 32, 44, 56 or 110 layers.

    Args:
        depth: Number of layers with weights, ``6n + 2``.
        include_top: Whether to end with global average pooling and the
            classifier 'predictions'.
        weights: None (random initialisation), 'glyphs' (ResNet-20 only:
            trained on the glyph letters, 52 classes, input (32, 32, 1)), or
            the path of an HDF5 weight file with the zoo's layer names.
        input_tensor: A tensor from ``minidl.layers.Input`` to build on.
        input_shape: ``(height, width, channels)``, at least 8x8; (32, 32, 3)
            by default, (32, 32, 1) with the glyph weights.
        pooling: Without the top: None (the last feature map), 'avg' or 'max'.
        classes: Width of the classifier; 10 by default, 52 with the glyph weights.
        classifier_activation: Activation of 'predictions' ('softmax', or
            None for logits).

    Returns:
        A :class:`minidl.models.Model` named ``resnet{depth}``.
    """
    if depth not in _DEPTHS:
        raise ValueError(f'CIFAR ResNet depth must be one of {_DEPTHS}, got {depth!r}')
    name = f'resnet{depth}'
    input_shape, weights, classes = application.check_arguments(
        name, include_top, weights, input_shape, pooling, classes, (32, 32, 3), 10, 8)
    inputs, x = application.model_input(name, input_tensor, input_shape)
    x = conv_bn(x, 16, 3, 1, 'conv1')
    for index, filters in enumerate((16, 32, 64)):
        x = stage(x, basic_block, filters, (depth - 2) // 6, 1 if index == 0 else 2, index + 2)
    return application.finish(name, inputs, x, include_top, pooling, classes,
                              classifier_activation, weights)


def ResNet20(**kwargs):
    """ResNet-20 (272,474 trainable parameters at 10 classes)."""
    return ResNetCifar(20, **kwargs)


def ResNet32(**kwargs):
    """ResNet-32 (n = 5)."""
    return ResNetCifar(32, **kwargs)


def ResNet44(**kwargs):
    """ResNet-44 (n = 7)."""
    return ResNetCifar(44, **kwargs)


def ResNet56(**kwargs):
    """ResNet-56 (n = 9)."""
    return ResNetCifar(56, **kwargs)


def ResNet110(**kwargs):
    """ResNet-110 (n = 18)."""
    return ResNetCifar(110, **kwargs)
