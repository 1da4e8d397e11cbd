"""Keras 2's layers: ``from minidl.layers import Dense, Conv2D, LSTM, ...``.

Every layer follows the contract in :mod:`minidl.layers.base`. One file per
family: core, conv, pooling, reshaping, normalization, embedding, noise,
recurrent, wrappers, merge.
"""

from minidl.layers.base import Layer
from minidl.layers.input_spec import InputSpec
from minidl.layers.input_layer import Input, InputLayer
from minidl.layers.core import (
    Activation, Dense, Dropout, Flatten, Lambda, Permute, RepeatVector, Reshape)
from minidl.layers.conv import Conv1D, Conv2D
from minidl.layers.pooling import (
    AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
    GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)
from minidl.layers.reshaping import (
    Cropping1D, Cropping2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from minidl.layers.normalization import BatchNormalization, LayerNormalization
from minidl.layers.embedding import Embedding
from minidl.layers.noise import AlphaDropout, GaussianDropout, GaussianNoise
from minidl.layers.recurrent import GRU, LSTM, SimpleRNN
from minidl.layers.wrappers import Bidirectional, TimeDistributed
from minidl.layers.merge import (
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,
    concatenate, dot, maximum, minimum, multiply, subtract)
from minidl.layers.serialization import deserialize, serialize

# Keras's short aliases.
Convolution1D, Convolution2D = Conv1D, Conv2D
MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, \
    AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
