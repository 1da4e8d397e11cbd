"""``keras.layers.convolutional``: the convolutions, and the padding, cropping,
upsampling and pooling layers Keras 2 also exports from this module path.
"""

from minidl.layers.conv import Conv1D, Conv2D
from minidl.layers.pooling import (
    AveragePooling1D, AveragePooling2D, MaxPooling1D, MaxPooling2D)
from minidl.layers.reshaping import (
    Cropping1D, Cropping2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)

Convolution1D, Convolution2D = Conv1D, Conv2D

__all__ = ['AveragePooling1D', 'AveragePooling2D', 'Conv1D', 'Conv2D', 'Convolution1D',
           'Convolution2D', 'Cropping1D', 'Cropping2D', 'MaxPooling1D', 'MaxPooling2D',
           'UpSampling1D', 'UpSampling2D', 'ZeroPadding1D', 'ZeroPadding2D']
