"""AlexNet (Krizhevsky et al. 2012) in three sizes.

``variant='torchvision'`` is the one-tower network torchvision defines
(61,100,840 trainable parameters at 1,000 classes): five convolutions 64,
192, 384, 256, 256 wide, three 3x3 max pools of stride 2, and two dense
layers of 4,096 with dropout. ``'slides'`` is benchmark W4's network,
the same without the fifth convolution. ``'small'`` keeps the shape of the
network (five convolutions, three pools, two dense layers with dropout) at a
size that trains on 32x32 images: 5x5 and 3x3 convolutions of stride 1 that
are 32, 96, 192, 128, 128 wide and dense layers of 512.

Layer names: ``conv1`` ... ``conv5`` (ReLU inside), ``conv1_pad``,
``pool1``, ``pool2``, ``pool3``; the top ``flatten``, ``drop6``, ``fc6``,
``drop7``, ``fc7``, ``predictions``. torchvision's adaptive average pool to
6x6 is the identity at 224x224, the only size at which a model with the
top is built; its flattening is channels-first, which
:mod:`zoo.convert` accounts for in fc6's rows.

``preprocess_input`` here follows torchvision's ImageNet weights; the small
variant's registered glyph weights take ``preprocess_input(x, mode='unit')``.
``decode_predictions`` names the classes of whichever weights the model has:
52 scores are the glyphs, 1,000 ImageNet's.
"""

from minidl import layers

from zoo import application
from zoo.preprocessing import make_decode_predictions, make_preprocess_input

preprocess_input = make_preprocess_input('torch')
decode_predictions = make_decode_predictions('auto')

# (filters, kernel, stride, padding) per convolution, dense width, default input, min size
_VARIANTS = {
    'torchvision': ([(64, 11, 4, 2), (192, 5, 1, 2), (384, 3, 1, 1), (256, 3, 1, 1),
                     (256, 3, 1, 1)], 4096, (224, 224, 3), 63),
    'slides': ([(64, 11, 4, 2), (192, 5, 1, 2), (384, 3, 1, 1), (256, 3, 1, 1)],
               4096, (224, 224, 3), 63),
    'small': ([(32, 5, 1, 2), (96, 5, 1, 2), (192, 3, 1, 1), (128, 3, 1, 1), (128, 3, 1, 1)],
              512, (32, 32, 3), 15),
}


def AlexNet(include_top=True, weights=None, input_tensor=None, input_shape=None, pooling=None,
            classes=None, classifier_activation='softmax', variant='torchvision'):
    """AlexNet; see the module docstring for the variants.

    Args:
        include_top: Whether to end with the dense layers fc6, fc7 and the
            classifier 'predictions'; then the input must have the
            variant's default size.
        weights: None (random initialisation), the name of registered
            weights ('glyphs' for ``variant='small'``: 52 letters, input
            (32, 32, 1), 98.10 % top-1 on the 5 fonts training never saw),
            or the path of an HDF5 weight file with the zoo's
            layer names.
        input_tensor: A tensor from ``minidl.layers.Input`` to build on.
        input_shape: ``(height, width, channels)``; (224, 224, 3) by default,
            (32, 32, 3) for 'small'.
        pooling: Without the top: None (the last feature map), 'avg' or 'max'.
        classes: Width of the classifier; 1,000 by default, 52 with the glyph
            weights.
        classifier_activation: Activation of 'predictions' ('softmax', or
            None for logits).
        variant: 'torchvision', 'slides' or 'small'.

    Returns:
        A :class:`minidl.models.Model` named 'alexnet' (or 'alexnet_slides',
        'alexnet_small').
    """
    if variant not in _VARIANTS:
        raise ValueError(f'AlexNet variant must be one of {sorted(_VARIANTS)}, got {variant!r}')
    convolutions, width, default_shape, min_size = _VARIANTS[variant]
    name = 'alexnet' if variant == 'torchvision' else f'alexnet_{variant}'
    input_shape, weights, classes = application.check_arguments(
        name, include_top, weights, input_shape, pooling, classes, default_shape, 1000,
        min_size, fixed_shape=True)
    inputs, x = application.model_input(name, input_tensor, input_shape)
    # The max pools follow the first, the second and the last convolution.
    pooled = (0, 1, len(convolutions) - 1)
    for index, (filters, kernel, stride, padding) in enumerate(convolutions):
        number = index + 1
        if stride > 1:
            x = layers.ZeroPadding2D(padding, name=f'conv{number}_pad')(x)
        x = layers.Conv2D(filters, kernel, strides=stride,
                          padding='valid' if stride > 1 else 'same', activation='relu',
                          name=f'conv{number}')(x)
        if index in pooled:
            x = layers.MaxPooling2D(3, strides=2, name=f'pool{pooled.index(index) + 1}')(x)
    if include_top:
        x = layers.Flatten(name='flatten')(x)
        x = layers.Dropout(0.5, name='drop6')(x)
        x = layers.Dense(width, activation='relu', name='fc6')(x)
        x = layers.Dropout(0.5, name='drop7')(x)
        x = layers.Dense(width, activation='relu', name='fc7')(x)
    return application.finish(name, inputs, x, include_top, pooling, classes,
                              classifier_activation, weights, flatten_top=True)
