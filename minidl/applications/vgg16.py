"""Keras 2's ``keras.applications.vgg16``: VGG16 and its ImageNet preprocessing."""

from minidl.applications.imagenet_utils import decode_predictions, preprocess_input
from minidl.applications.vgg import build_vgg

__all__ = ['VGG16', 'decode_predictions', 'preprocess_input']


def VGG16(include_top=True, weights='imagenet', input_tensor=None, input_shape=None,
          pooling=None, classes=1000, **kwargs):
    """VGG16 (Simonyan and Zisserman, 2014) as Keras 2 builds it: 13 convolutions in 5 blocks.

    Args:
        include_top: Whether to end with Keras's classifier (``flatten``,
            ``fc1``, ``fc2``, ``predictions``); with it the input must be
            a fixed size (224x224 by default).
        weights: None (random initialization) or the path of a Keras VGG16
            weights file; 'imagenet' cannot be downloaded here, and its
            error names the file to pass instead.
        input_tensor: A tensor to build the model on: a symbolic tensor
            (the model's inputs are then the graph inputs it comes from)
            or a Tensor (wrapped by ``Input(tensor=...)``).
        input_shape: Shape of one image, e.g. ``(224, 224, 3)``
            (channels first under ``image_data_format() ==
            'channels_first'``); each side at least 32. Without the top the
            sides may be None.
        pooling: Without the top, None (the last block's 4-D output),
            'avg' or 'max' (global pooling to a 2-D output).
        classes: Width of the classifier, with the top and without
            ImageNet weights.

    Returns:
        A :class:`~minidl.models.Model` named 'vgg16' with 138,357,544
        parameters with the top and 14,714,688 without.
    """
    return build_vgg('vgg16', (2, 2, 3, 3, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, **kwargs)
