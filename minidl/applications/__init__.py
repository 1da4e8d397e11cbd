"""Keras 2's ``keras.applications``: image models by their Keras names and layer names.

``from minidl.applications import vgg16`` then ``vgg16.VGG16(weights=None)``
builds Keras 2's VGG16, layer for layer (``block1_conv1`` ... ``fc1``,
``fc2``, ``predictions``) with its parameter counts, so a VGG ``.h5`` that
Keras wrote loads into it (``weights='path/to/file.h5'``). Nothing is
downloaded: ``weights='imagenet'`` says so and names the file to pass
instead. ``preprocess_input`` is ImageNet's 'caffe' preprocessing (BGR, mean
pixel subtracted), as Keras's VGG modules give it.

Modules: ``imagenet_utils`` (preprocessing, the weights argument), ``vgg``
(the body both VGGs share), ``vgg16``, ``vgg19``.
"""

from minidl.applications import imagenet_utils, vgg16, vgg19
from minidl.applications.vgg16 import VGG16
from minidl.applications.vgg19 import VGG19

__all__ = ['VGG16', 'VGG19', 'imagenet_utils', 'vgg16', 'vgg19']
