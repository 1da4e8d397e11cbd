"""Every layer passes Keras 2's ``layer_test`` harness, and the harness catches broken layers."""

import numpy as np
import pytest

from minidl import layers
from minidl.layers import Layer
from minidl.utils.test_utils import layer_test

# (class, kwargs, input shape or input data, expected output dtype): one row per
# single-input layer class that minidl registers.
CASES = [
    (layers.Activation, {'activation': 'relu'}, (2, 3), None),
    (layers.ActivityRegularization, {'l1': 0.01, 'l2': 0.02}, (2, 3), None),
    (layers.AlphaDropout, {'rate': 0.3, 'seed': 1}, (2, 3), None),
    (layers.AveragePooling1D, {'pool_size': 2}, (2, 6, 3), None),
    (layers.AveragePooling2D, {'pool_size': 2, 'padding': 'same'}, (2, 5, 5, 3), None),
    (layers.BatchNormalization, {'momentum': 0.9}, (3, 4), None),
    (layers.Bidirectional, {'layer': layers.LSTM(3, return_sequences=True)}, (2, 4, 5), None),
    (layers.Conv1D, {'filters': 4, 'kernel_size': 3, 'padding': 'causal'}, (2, 7, 3), None),
    (layers.Conv2D, {'filters': 4, 'kernel_size': 3, 'strides': 2}, (2, 7, 7, 3), None),
    (layers.Conv3D, {'filters': 2, 'kernel_size': 2, 'padding': 'same'}, (2, 3, 4, 3, 2), None),
    (layers.Conv3DTranspose, {'filters': 2, 'kernel_size': 2, 'strides': 2}, (2, 2, 3, 2, 3),
     None),
    (layers.MaxPooling3D, {'pool_size': 2, 'padding': 'same'}, (2, 3, 4, 3, 2), None),
    (layers.AveragePooling3D, {'pool_size': (1, 2, 2)}, (2, 2, 4, 4, 2), None),
    (layers.GlobalMaxPooling3D, {}, (2, 2, 3, 2, 3), None),
    (layers.GlobalAveragePooling3D, {'data_format': 'channels_first'}, (2, 3, 2, 3, 2), None),
    (layers.ZeroPadding3D, {'padding': (1, 0, 2)}, (2, 2, 3, 2, 2), None),
    (layers.Cropping3D, {'cropping': ((1, 0), (0, 1), (1, 1))}, (2, 3, 3, 4, 2), None),
    (layers.UpSampling3D, {'size': (1, 2, 3)}, (2, 2, 2, 2, 2), None),
    (layers.LocallyConnected1D, {'filters': 3, 'kernel_size': 2, 'strides': 2}, (2, 7, 3),
     None),
    (layers.LocallyConnected2D, {'filters': 3, 'kernel_size': (2, 3)}, (2, 4, 5, 2), None),
    (layers.ConvLSTM2D, {'filters': 2, 'kernel_size': 3, 'padding': 'same',
                         'return_sequences': True}, (2, 3, 4, 4, 2), None),
    (layers.Conv2DTranspose, {'filters': 4, 'kernel_size': 3, 'strides': 2, 'padding': 'same',
                              'output_padding': 1}, (2, 4, 5, 3), None),
    (layers.Cropping1D, {'cropping': (1, 2)}, (2, 6, 3), None),
    (layers.Cropping2D, {'cropping': ((1, 0), (0, 2))}, (2, 5, 6, 3), None),
    (layers.Dense, {'units': 3}, (2, 4), None),
    (layers.Dense, {'units': 3}, (2, 5, 4), None),
    (layers.DepthwiseConv2D, {'kernel_size': 3, 'depth_multiplier': 2, 'padding': 'same'},
     (2, 5, 5, 3), None),
    (layers.Dropout, {'rate': 0.5}, (2, 3), None),
    (layers.ELU, {'alpha': 0.5}, (2, 3), None),
    (layers.Embedding, {'input_dim': 10, 'output_dim': 4},
     np.array([[1, 2, 9], [0, 3, 3]], 'int32'), 'float32'),
    (layers.Flatten, {}, (2, 3, 4), None),
    (layers.GRU, {'units': 3, 'return_sequences': True}, (2, 4, 5), None),
    (layers.GaussianDropout, {'rate': 0.2}, (2, 3), None),
    (layers.GaussianNoise, {'stddev': 0.5}, (2, 3), None),
    (layers.GlobalAveragePooling1D, {}, (2, 4, 3), None),
    (layers.GlobalAveragePooling2D, {}, (2, 4, 4, 3), None),
    (layers.GlobalMaxPooling1D, {}, (2, 4, 3), None),
    (layers.GlobalMaxPooling2D, {}, (2, 4, 4, 3), None),
    (layers.LSTM, {'units': 3}, (2, 4, 5), None),
    (layers.LayerNormalization, {}, (2, 5), None),
    (layers.LeakyReLU, {'alpha': 0.1}, (2, 3), None),
    (layers.Masking, {'mask_value': 1.0}, (2, 4, 3), None),
    (layers.CuDNNGRU, {'units': 3, 'return_sequences': True}, (2, 4, 5), None),
    (layers.CuDNNLSTM, {'units': 3}, (2, 4, 5), None),
    (layers.MaxPooling1D, {'pool_size': 2, 'strides': 1}, (2, 6, 3), None),
    (layers.MaxPooling2D, {'pool_size': (2, 3)}, (2, 6, 6, 3), None),
    (layers.PReLU, {'shared_axes': [1]}, (2, 3, 4), None),
    (layers.Permute, {'dims': (2, 1)}, (2, 3, 4), None),
    (layers.RepeatVector, {'n': 3}, (2, 4), None),
    (layers.ReLU, {'max_value': 6.0, 'negative_slope': 0.1, 'threshold': 0.5}, (2, 3), None),
    (layers.RNN, {'cell': layers.LSTMCell(3), 'return_sequences': True}, (2, 4, 5), None),
    (layers.RNN, {'cell': [layers.SimpleRNNCell(3), layers.GRUCell(2, reset_after=True)],
                  'go_backwards': True}, (2, 4, 5), None),
    (layers.Reshape, {'target_shape': (2, -1)}, (2, 3, 4), None),
    (layers.SeparableConv1D, {'filters': 4, 'kernel_size': 3, 'strides': 2}, (2, 7, 3), None),
    (layers.SeparableConv2D, {'filters': 4, 'kernel_size': 3, 'depth_multiplier': 2,
                              'data_format': 'channels_first'}, (2, 3, 6, 5), None),
    (layers.SimpleRNN, {'units': 3, 'go_backwards': True}, (2, 4, 5), None),
    (layers.Softmax, {'axis': 1}, (2, 3, 4), None),
    (layers.SpatialDropout1D, {'rate': 0.5}, (2, 4, 3), None),
    (layers.SpatialDropout2D, {'rate': 0.5, 'data_format': 'channels_first'}, (2, 3, 4, 4),
     None),
    (layers.SpatialDropout3D, {'rate': 0.5}, (2, 2, 3, 3, 2), None),
    (layers.ThresholdedReLU, {'theta': 2.0}, (2, 3), None),
    (layers.TimeDistributed, {'layer': layers.Dense(2)}, (2, 4, 5), None),
    (layers.UpSampling1D, {'size': 2}, (2, 3, 4), None),
    (layers.UpSampling2D, {'size': (2, 3)}, (2, 3, 3, 2), None),
    (layers.UpSampling2D, {'size': 2, 'interpolation': 'bilinear'}, (2, 3, 4, 2), None),
    (layers.ZeroPadding1D, {'padding': 2}, (2, 3, 4), None),
    (layers.ZeroPadding2D, {'padding': ((1, 0), (2, 1))}, (2, 3, 3, 2), None),
]

# Registered classes that the single-input harness does not apply to, and why.
NOT_SINGLE_INPUT = {
    'Add': 'merges a list of inputs (tests/minidl/layers/test_merge.py)',
    'Average': 'merges a list of inputs', 'Concatenate': 'merges a list of inputs',
    'Dot': 'merges a list of inputs', 'Maximum': 'merges a list of inputs',
    'Minimum': 'merges a list of inputs', 'Multiply': 'merges a list of inputs',
    'Subtract': 'merges a list of inputs',
    'FrameMask': 'the zoo registers it when imported; it takes [sequence, features] '
                 '(tests/zoo/speech/test_deepspeech.py)',
    'InputLayer': 'makes the input, takes none',
    'Lambda': 'holds code, which configs cannot carry (tests/minidl/layers/test_core.py)',
    'Operation': 'records a backend function on symbolic tensors (tests/minidl/backend)',
    'SyncBatchNormalization': 'minidl_dist registers it when imported; it needs an MPI job '
                              '(tests/minidl_dist)',
    'Model': 'a model, not a layer type', 'Network': 'a model, not a layer type',
    'Sequential': 'a model, not a layer type', 'Wrapper': 'abstract base of the wrappers',
    'SimpleRNNCell': 'a cell computes one step from (inputs, states); RNN runs it '
                     '(tests/minidl/layers/test_rnn_cells.py)',
    'GRUCell': 'a cell: one step from (inputs, states)',
    'LSTMCell': 'a cell: one step from (inputs, states)',
    'StackedRNNCells': 'a stack of cells: one step from (inputs, states)',
}


@pytest.mark.parametrize('layer_cls, kwargs, shape_or_data, output_dtype', CASES,
                         ids=lambda value: getattr(value, '__name__', None))
def test_every_layer_passes_layer_test(layer_cls, kwargs, shape_or_data, output_dtype):
    if isinstance(shape_or_data, np.ndarray):
        output = layer_test(layer_cls, kwargs, input_data=shape_or_data,
                            expected_output_dtype=output_dtype)
    else:
        output = layer_test(layer_cls, kwargs, input_shape=shape_or_data)
    assert np.all(np.isfinite(output))


def test_every_registered_layer_is_covered():
    covered = {case[0].__name__ for case in CASES} | set(NOT_SINGLE_INPUT)
    assert set(Layer.registry) - covered == set()


def test_expected_output_is_compared():
    x = np.arange(6, dtype='float32').reshape(2, 3)
    np.testing.assert_array_equal(
        layer_test(layers.Activation, {'activation': 'relu'}, input_data=x - 2),
        np.maximum(x - 2, 0))
    with pytest.raises(AssertionError, match='expected_output'):
        layer_test(layers.Activation, {'activation': 'relu'}, input_data=x, expected_output=-x)


class _ForgetsItsConfig(Layer):
    def __init__(self, scale=2.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return inputs * self.scale


class _WrongShape(Layer):
    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape[:-1] + (input_shape[-1] + 1,)


@pytest.mark.parametrize('layer_cls, kwargs, message', [
    (_ForgetsItsConfig, {'scale': 3.0}, 'predicts differently'),
    (_WrongShape, {}, 'does not fit the announced'),
])
def test_broken_layers_fail_the_harness(layer_cls, kwargs, message):
    with pytest.raises(AssertionError, match=message):
        layer_test(layer_cls, kwargs, input_shape=(2, 3))


def test_get_test_data_follows_keras_draws():
    from minidl.utils.test_utils import get_test_data
    np.random.seed(1)
    (x_train, y_train), (x_test, y_test) = get_test_data(
        num_train=40, num_test=10, input_shape=(3,), classification=True, num_classes=4)
    # Keras 2's draws, by hand: the labels, then each sample's inputs around its label.
    np.random.seed(1)
    labels = np.random.randint(0, 4, size=(50,))
    inputs = np.stack([np.random.normal(loc=label, scale=0.7, size=(3,)) for label in labels])
    np.testing.assert_array_equal(np.concatenate([y_train, y_test]), labels)
    np.testing.assert_allclose(np.concatenate([x_train, x_test]), inputs.astype(np.float32))
    assert x_train.shape == (40, 3) and x_train.dtype == np.float32 and y_test.shape == (10,)
    (x, y), _ = get_test_data(num_train=5, num_test=1, input_shape=(2,), output_shape=(3,),
                              classification=False)
    assert x.shape == (5, 2) and y.shape == (5, 3) and y.dtype == np.float32


def test_keras_module_paths_of_saving_and_3d_pooling():
    from minidl.engine import saving
    from minidl.layers import pooling, pooling3d
    from minidl.models import load_model, model_from_yaml
    assert saving.load_model is load_model
    assert pooling.GlobalMaxPooling3D is pooling3d.GlobalMaxPooling3D
    with pytest.raises(AttributeError, match='no attribute'):
        pooling.Pooling4D
    with pytest.raises(NotImplementedError, match='YAML'):
        model_from_yaml('class_name: Sequential')
