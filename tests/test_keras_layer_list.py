"""Every layer name Keras 2.2.4 exports from ``keras.layers`` is in ``minidl.layers``
or listed, with its reason, in the README's section of layers not provided."""

import pathlib
import re

import minidl.layers

README = pathlib.Path(__file__).resolve().parent.parent / 'README.md'
SECTION = '### Keras 2.2.4 layers that minidl does not provide'

# The layer names of Keras 2.2.4's keras/layers/__init__.py: the public classes, aliases
# and merge functions of the modules it star-imports (merge, core, convolutional, pooling,
# local, recurrent, cudnn_recurrent, normalization, embeddings, noise,
# advanced_activations, wrappers, convolutional_recurrent, legacy.layers), and the
# engine names it imports (the helpers those modules import, such as K or np, are left out).
KERAS_224_LAYERS = [
    # engine
    'Layer', 'Input', 'InputLayer', 'InputSpec',
    # merge
    'Add', 'Subtract', 'Multiply', 'Average', 'Maximum', 'Minimum', 'Concatenate', 'Dot',
    'add', 'subtract', 'multiply', 'average', 'maximum', 'minimum', 'concatenate', 'dot',
    # core
    'Masking', 'Dropout', 'SpatialDropout1D', 'SpatialDropout2D', 'SpatialDropout3D',
    'Activation', 'Reshape', 'Permute', 'Flatten', 'RepeatVector', 'Lambda', 'Dense',
    'ActivityRegularization',
    # convolutional
    'Conv1D', 'Conv2D', 'Conv3D', 'Conv2DTranspose', 'Conv3DTranspose', 'SeparableConv1D',
    'SeparableConv2D', 'DepthwiseConv2D', 'UpSampling1D', 'UpSampling2D', 'UpSampling3D',
    'ZeroPadding1D', 'ZeroPadding2D', 'ZeroPadding3D', 'Cropping1D', 'Cropping2D',
    'Cropping3D', 'Convolution1D', 'Convolution2D', 'Convolution3D',
    'SeparableConvolution1D', 'SeparableConvolution2D', 'Convolution2DTranspose',
    'Deconvolution2D', 'Deconv2D', 'Deconvolution3D', 'Deconv3D', 'AtrousConv1D',
    'AtrousConv2D',
    # pooling
    'MaxPooling1D', 'AveragePooling1D', 'MaxPooling2D', 'AveragePooling2D', 'MaxPooling3D',
    'AveragePooling3D', 'GlobalAveragePooling1D', 'GlobalMaxPooling1D',
    'GlobalAveragePooling2D', 'GlobalMaxPooling2D', 'GlobalAveragePooling3D',
    'GlobalMaxPooling3D', 'AvgPool1D', 'MaxPool1D', 'AvgPool2D', 'MaxPool2D', 'AvgPool3D',
    'MaxPool3D', 'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D', 'GlobalAvgPool1D',
    'GlobalAvgPool2D', 'GlobalAvgPool3D',
    # local
    'LocallyConnected1D', 'LocallyConnected2D',
    # recurrent, cudnn_recurrent
    'StackedRNNCells', 'RNN', 'SimpleRNNCell', 'SimpleRNN', 'GRUCell', 'GRU', 'LSTMCell',
    'LSTM', 'CuDNNGRU', 'CuDNNLSTM',
    # normalization, embeddings, noise
    'BatchNormalization', 'Embedding', 'GaussianNoise', 'GaussianDropout', 'AlphaDropout',
    # advanced_activations
    'LeakyReLU', 'PReLU', 'ELU', 'ThresholdedReLU', 'Softmax', 'ReLU',
    # wrappers
    'Wrapper', 'TimeDistributed', 'Bidirectional',
    # convolutional_recurrent
    'ConvRNN2D', 'ConvLSTM2DCell', 'ConvLSTM2D',
    # legacy.layers
    'MaxoutDense', 'Highway', 'AtrousConvolution1D', 'AtrousConvolution2D', 'Recurrent',
    'ConvRecurrent2D',
]


def not_provided_in_readme():
    """The names in backquotes at the start of each item of the README's section."""
    text = README.read_text()
    assert SECTION in text, f'the README has no section {SECTION!r}'
    section = text.split(SECTION, 1)[1].split('\n#', 1)[0]
    items = re.findall(r'^- (.*?):', section, re.M | re.S)  # the names before the colon
    return {name for item in items for name in re.findall(r'`(\w+)`', item)}


def test_the_list_has_no_duplicates():
    assert len(set(KERAS_224_LAYERS)) == len(KERAS_224_LAYERS)


def test_every_keras_layer_is_provided_or_listed_in_the_readme():
    listed = not_provided_in_readme()
    missing = [name for name in KERAS_224_LAYERS
               if not hasattr(minidl.layers, name) and name not in listed]
    assert missing == [], f'neither in minidl.layers nor in the README section: {missing}'


def test_the_readme_lists_only_keras_layers_that_are_absent():
    listed = not_provided_in_readme()
    assert listed <= set(KERAS_224_LAYERS), listed - set(KERAS_224_LAYERS)
    provided = sorted(name for name in listed if hasattr(minidl.layers, name))
    assert provided == [], f'listed as not provided, but minidl.layers has {provided}'
