"""Keras 2's layers: ``from minidl.layers import Dense, Conv2D, LSTM, ...``.

Every layer follows the contract in :mod:`minidl.layers.base`. One file per
family: core, conv, pooling, reshaping, normalization, embedding, noise,
recurrent, wrappers, merge, advanced_activations, dropout_variants, conv_lstm.
"""

from minidl.layers.base import Layer
from minidl.layers.input_spec import InputSpec
from minidl.layers.input_layer import Input, InputLayer
from minidl.layers.core import (
    Activation, Dense, Dropout, Flatten, Lambda, Permute, RepeatVector, Reshape)
from minidl.layers.conv import Conv1D, Conv2D
from minidl.layers.conv_transpose import (
    Conv2DTranspose, Convolution2DTranspose, Deconv2D, Deconvolution2D)
from minidl.layers.separable import (
    DepthwiseConv2D, SeparableConv1D, SeparableConv2D, SeparableConvolution1D,
    SeparableConvolution2D)
from minidl.layers.pooling import (
    AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
    GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPooling1D, MaxPooling2D)
from minidl.layers.reshaping import (
    Cropping1D, Cropping2D, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from minidl.layers.conv3d import (
    Conv3D, Conv3DTranspose, Convolution3D, Deconv3D, Deconvolution3D)
from minidl.layers.pooling3d import (
    AveragePooling3D, AvgPool3D, GlobalAveragePooling3D, GlobalAvgPool3D, GlobalMaxPool3D,
    GlobalMaxPooling3D, MaxPool3D, MaxPooling3D)
from minidl.layers.reshaping3d import Cropping3D, UpSampling3D, ZeroPadding3D
from minidl.layers.local import LocallyConnected1D, LocallyConnected2D
from minidl.layers.normalization import BatchNormalization, LayerNormalization
from minidl.layers.embedding import Embedding
from minidl.layers.masking import Masking
from minidl.layers.noise import AlphaDropout, GaussianDropout, GaussianNoise
from minidl.layers.recurrent import GRU, LSTM, SimpleRNN
from minidl.layers.cudnn_recurrent import CuDNNGRU, CuDNNLSTM
from minidl.layers.rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from minidl.layers.rnn import RNN
from minidl.layers.wrappers import Bidirectional, TimeDistributed, Wrapper
from minidl.layers.advanced_activations import (
    ELU, LeakyReLU, PReLU, ReLU, Softmax, ThresholdedReLU)
from minidl.layers.dropout_variants import (
    ActivityRegularization, SpatialDropout1D, SpatialDropout2D, SpatialDropout3D)
from minidl.layers.conv_lstm import ConvLSTM2D
from minidl.layers.merge import (
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,
    concatenate, dot, maximum, minimum, multiply, subtract)
from minidl.layers.serialization import deserialize, serialize

# Keras's short aliases.
Convolution1D, Convolution2D = Conv1D, Conv2D
MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, \
    AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
