"""ResNet-18/34/50/101/152 for ImageNet-sized images (He et al. 2015), as torchvision builds them.

The architecture is torchvision's ``resnet*`` (its "ResNet v1.5"): the stride
of a bottleneck block sits on its 3x3 convolution, convolutions have no bias,
shortcuts are a 1x1 convolution and batch normalization where the shape
changes. Weights converted from torchvision (:mod:`zoo.convert`) therefore
give torchvision's logits.

Layer names follow ``keras.applications``' ResNet, which the weight files
use::

    conv1_pad, conv1_conv, conv1_bn, conv1_relu, pool1_pad, pool1_pool   the stem
    conv{stage}_block{block}_{k}_conv / _bn / _relu    k = 1, 2 (basic), 1, 2, 3 (bottleneck)
    conv{stage}_block{block}_0_conv / _0_bn            the projection shortcut
    conv{stage}_block{block}_add / _out                the sum and its ReLU
    avg_pool, predictions                              the top

Stages are numbered 2 to 5 (conv2_x ... conv5_x of the paper). Where
torchvision pads a strided convolution by ``k // 2`` on every side, the
model has a ZeroPadding2D (``..._pad``) before a 'valid' convolution,
since Keras's 'same' pads only after the image at stride 2. Batch
normalization uses torchvision's epsilon 1e-5 and momentum 0.1 (0.9 in
Keras's convention).
"""

from minidl import layers

from zoo import application
from zoo.preprocessing import make_decode_predictions, make_preprocess_input

BN_ARGS = {'epsilon': 1e-5, 'momentum': 0.9}

preprocess_input = make_preprocess_input('torch')
decode_predictions = make_decode_predictions('imagenet')


def conv_bn(x, filters, kernel, stride, name, relu=True):
    """Convolution (no bias), batch normalization and optionally ReLU, named ``name_*``."""
    if stride > 1 and kernel > 1:
        x = layers.ZeroPadding2D(kernel // 2, name=f'{name}_pad')(x)
        padding = 'valid'
    else:
        padding = 'same'
    x = layers.Conv2D(filters, kernel, strides=stride, padding=padding, use_bias=False,
                      kernel_initializer='he_normal', name=f'{name}_conv')(x)
    x = layers.BatchNormalization(name=f'{name}_bn', **BN_ARGS)(x)
    if relu:
        x = layers.Activation('relu', name=f'{name}_relu')(x)
    return x


def basic_block(x, filters, stride, name):
    """Two 3x3 convolutions (ResNet-18/34 and the CIFAR ResNets); output width ``filters``."""
    shortcut = _shortcut(x, filters, stride, name)
    y = conv_bn(x, filters, 3, stride, f'{name}_1')
    y = conv_bn(y, filters, 3, 1, f'{name}_2', relu=False)
    return _merge(y, shortcut, name)


def bottleneck_block(x, filters, stride, name):
    """1x1, 3x3 (strided) and 1x1 convolutions; output width ``4 * filters``."""
    shortcut = _shortcut(x, 4 * filters, stride, name)
    y = conv_bn(x, filters, 1, 1, f'{name}_1')
    y = conv_bn(y, filters, 3, stride, f'{name}_2')
    y = conv_bn(y, 4 * filters, 1, 1, f'{name}_3', relu=False)
    return _merge(y, shortcut, name)


def _shortcut(x, filters, stride, name):
    if stride == 1 and x.shape[-1] == filters:
        return x
    return conv_bn(x, filters, 1, stride, f'{name}_0', relu=False)


def _merge(y, shortcut, name):
    y = layers.Add(name=f'{name}_add')([y, shortcut])
    return layers.Activation('relu', name=f'{name}_out')(y)


def stage(x, block, filters, blocks, stride, number):
    """``blocks`` blocks named ``conv{number}_block1..``, the first with ``stride``."""
    for index in range(blocks):
        x = block(x, filters, stride if index == 0 else 1, f'conv{number}_block{index + 1}')
    return x


_DEPTHS = {
    18: (basic_block, (2, 2, 2, 2)),
    34: (basic_block, (3, 4, 6, 3)),
    50: (bottleneck_block, (3, 4, 6, 3)),
    101: (bottleneck_block, (3, 4, 23, 3)),
    152: (bottleneck_block, (3, 8, 36, 3)),
}


def ResNet(depth, include_top=True, weights=None, input_tensor=None, input_shape=None,
           pooling=None, classes=None, classifier_activation='softmax'):
    """A torchvision ResNet of ``depth`` 18, 34, 50, 101 or 152 layers.

    Args:
        depth: Number of layers with weights.
        include_top: Whether to end with global average pooling and the
            classifier 'predictions'.
        weights: None (random initialisation), the name of registered
            weights (:mod:`zoo.registry`; none are registered for the
            ImageNet ResNets, whose ImageNet weights are converted from
            torchvision's with :func:`zoo.convert.load_torch_weights`), or
            the path of an HDF5 weight file with the zoo's layer names.
        input_tensor: A tensor from ``minidl.layers.Input`` to build on.
        input_shape: ``(height, width, 3)``, at least 32x32; (224, 224, 3)
            by default.
        pooling: Without the top: None (the last feature map), 'avg' or 'max'.
        classes: Width of the classifier; 1,000 by default.
        classifier_activation: Activation of 'predictions' ('softmax', or
            None for logits).

    Returns:
        A :class:`minidl.models.Model` named ``resnet{depth}``.
    """
    if depth not in _DEPTHS:
        raise ValueError(f'ResNet depth must be one of {sorted(_DEPTHS)}, got {depth!r}')
    name = f'resnet{depth}'
    input_shape, weights, classes = application.check_arguments(
        name, include_top, weights, input_shape, pooling, classes, (224, 224, 3), 1000, 32)
    inputs, x = application.model_input(name, input_tensor, input_shape)
    block, counts = _DEPTHS[depth]
    x = conv_bn(x, 64, 7, 2, 'conv1')
    x = layers.ZeroPadding2D(1, name='pool1_pad')(x)
    x = layers.MaxPooling2D(3, strides=2, name='pool1_pool')(x)
    for index, blocks in enumerate(counts):
        x = stage(x, block, 64 * 2 ** index, blocks, 1 if index == 0 else 2, index + 2)
    return application.finish(name, inputs, x, include_top, pooling, classes,
                              classifier_activation, weights)


def ResNet18(**kwargs):
    """ResNet-18: basic blocks 2, 2, 2, 2 (11,689,512 trainable parameters at 1,000 classes)."""
    return ResNet(18, **kwargs)


def ResNet34(**kwargs):
    """ResNet-34: basic blocks 3, 4, 6, 3 (21,797,672 trainable parameters at 1,000 classes)."""
    return ResNet(34, **kwargs)


def ResNet50(**kwargs):
    """ResNet-50: bottlenecks 3, 4, 6, 3 (25,557,032 trainable parameters at 1,000 classes)."""
    return ResNet(50, **kwargs)


def ResNet101(**kwargs):
    """ResNet-101: bottlenecks 3, 4, 23, 3 (44,549,160 trainable parameters at 1,000 classes)."""
    return ResNet(101, **kwargs)


def ResNet152(**kwargs):
    """ResNet-152: bottlenecks 3, 8, 36, 3 (60,192,808 trainable parameters at 1,000 classes)."""
    return ResNet(152, **kwargs)
