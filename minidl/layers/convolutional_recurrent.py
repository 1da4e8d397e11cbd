"""``keras.layers.convolutional_recurrent``: where Keras 2 scripts import ``ConvLSTM2D`` from."""

from minidl.layers.conv_lstm import ConvLSTM2D

__all__ = ['ConvLSTM2D']
