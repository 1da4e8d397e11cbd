"""The body VGG16 and VGG19 share: blocks of 3x3 convolutions, each ending in 2x2 max pooling.

Layer names, sizes and order are Keras 2's (``block{b}_conv{c}``,
``block{b}_pool``, ``flatten``, ``fc1``, ``fc2``, ``predictions``), since a
Keras weights file is matched to the model layer by layer.
"""

from minidl import backend as K
from minidl import layers
from minidl.applications.imagenet_utils import check_weights, input_shape_for
from minidl.models import Model
from minidl.utils import get_source_inputs

# Output channels of the five blocks.
_BLOCK_FILTERS = (64, 128, 256, 512, 512)
_IMAGENET_FILES = {
    'vgg16': 'vgg16_weights_tf_dim_ordering_tf_kernels',
    'vgg19': 'vgg19_weights_tf_dim_ordering_tf_kernels',
}


def build_vgg(name, convolutions_per_block, include_top, weights, input_tensor, input_shape,
              pooling, classes, **kwargs):
    """A VGG model as Keras 2's ``applications`` build it (see ``VGG16`` for the arguments).

    Args:
        name: 'vgg16' or 'vgg19': the model's name and its ImageNet file's.
        convolutions_per_block: How many convolutions each of the five blocks has.
    """
    if kwargs:
        # Keras 2.2.4 passes its backend and layer modules this way; minidl has one of each.
        unknown = sorted(set(kwargs) - {'backend', 'layers', 'models', 'utils'})
        if unknown:
            raise TypeError(f'{name}: unexpected arguments {", ".join(unknown)}')
    weights_path = check_weights(name, weights, include_top, classes, _IMAGENET_FILES[name])
    if pooling not in (None, 'avg', 'max'):
        raise ValueError(f'{name}: pooling must be None, "avg" or "max", got {pooling!r}')
    if input_tensor is not None and input_shape is None:
        input_shape = K.int_shape(input_tensor)[1:]  # the size the tensor has, not the default
    input_shape = input_shape_for(name, input_shape, default_size=224, min_size=32,
                                  require_flatten=include_top, pretrained=weights_path)
    if input_tensor is None:
        image = layers.Input(shape=input_shape)
    elif K.is_keras_tensor(input_tensor):
        image = input_tensor
    else:
        image = layers.Input(tensor=input_tensor, shape=input_shape)

    x = image
    for block, (filters, count) in enumerate(zip(_BLOCK_FILTERS, convolutions_per_block), 1):
        for index in range(1, count + 1):
            x = layers.Conv2D(filters, (3, 3), activation='relu', padding='same',
                              name=f'block{block}_conv{index}')(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f'block{block}_pool')(x)

    if include_top:
        x = layers.Flatten(name='flatten')(x)
        x = layers.Dense(4096, activation='relu', name='fc1')(x)
        x = layers.Dense(4096, activation='relu', name='fc2')(x)
        x = layers.Dense(classes, activation='softmax', name='predictions')(x)
    elif pooling == 'avg':
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == 'max':
        x = layers.GlobalMaxPooling2D()(x)

    # Built on another graph's tensor, the model starts where that tensor's graph starts.
    inputs = get_source_inputs(image) if input_tensor is not None else image
    model = Model(inputs, x, name=name)
    if weights_path is not None:
        model.load_weights(weights_path)
    return model
