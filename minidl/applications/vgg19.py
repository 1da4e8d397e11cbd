"""Keras 2's ``keras.applications.vgg19``: VGG19 and its ImageNet preprocessing."""

from minidl.applications.imagenet_utils import decode_predictions, preprocess_input
from minidl.applications.vgg import build_vgg

__all__ = ['VGG19', 'decode_predictions', 'preprocess_input']


def VGG19(include_top=True, weights='imagenet', input_tensor=None, input_shape=None,
          pooling=None, classes=1000, **kwargs):
    """VGG19 (Simonyan and Zisserman, 2014) as Keras 2 builds it: 16 convolutions in 5 blocks.

    The arguments are those of :func:`minidl.applications.vgg16.VGG16`.

    Returns:
        A :class:`~minidl.models.Model` named 'vgg19' with 143,667,240
        parameters with the top and 20,024,384 without.
    """
    return build_vgg('vgg19', (2, 2, 4, 4, 4), include_top, weights, input_tensor,
                     input_shape, pooling, classes, **kwargs)
