"""``keras.layers.convolutional``: the convolutions, and the padding, cropping,
upsampling and pooling layers Keras 2 also exports from this module path.
"""

from minidl.layers.conv import Conv1D, Conv2D
from minidl.layers.conv3d import Conv3D, Conv3DTranspose
from minidl.layers.conv_transpose import Conv2DTranspose
from minidl.layers.pooling import (
    AveragePooling1D, AveragePooling2D, MaxPooling1D, MaxPooling2D)
from minidl.layers.pooling3d import AveragePooling3D, MaxPooling3D
from minidl.layers.reshaping import (
    Cropping1D, Cropping2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from minidl.layers.reshaping3d import Cropping3D, UpSampling3D, ZeroPadding3D
from minidl.layers.separable import DepthwiseConv2D, SeparableConv1D, SeparableConv2D

Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Deconvolution2D, Deconvolution3D = Conv2DTranspose, Conv3DTranspose
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D

__all__ = ['AveragePooling1D', 'AveragePooling2D', 'AveragePooling3D', 'Conv1D', 'Conv2D',
           'Conv2DTranspose', 'Conv3D', 'Conv3DTranspose', 'Convolution1D', 'Convolution2D',
           'Convolution3D', 'Cropping1D', 'Cropping2D', 'Cropping3D', 'Deconvolution2D',
           'Deconvolution3D', 'DepthwiseConv2D', 'MaxPooling1D', 'MaxPooling2D',
           'MaxPooling3D', 'SeparableConv1D', 'SeparableConv2D', 'SeparableConvolution1D',
           'SeparableConvolution2D', 'UpSampling1D', 'UpSampling2D', 'UpSampling3D',
           'ZeroPadding1D', 'ZeroPadding2D', 'ZeroPadding3D']
