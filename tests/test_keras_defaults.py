"""Keras 2's defaults, read from Keras 2.2.4's source (2.3.1's where noted), as a table.

Each row is (class, the arguments it needs, {argument: Keras 2's default,
written as Keras 2.2.4's signature writes it}). A Keras 2 script that leaves
an argument out must get what Keras gives it, so each default is checked by
behaviour: an object made with Keras's default passed explicitly must equal
the one made without it (same config for layers and optimizers, same
attributes for callbacks). A default that minidl does not share, or an
argument it does not take, fails.

Where the two Keras 2 releases differ, minidl follows 2.3.1 for the
recurrent layers: ``recurrent_activation='sigmoid'`` and
``implementation=2`` (2.2.4: 'hard_sigmoid', which the fused recurrent
kernels do not implement, and 1). ``reset_after=False`` is the GRU default
of both.
"""

import pytest

from minidl import callbacks, layers, optimizers

REGULARIZED = {'kernel_regularizer': None, 'bias_regularizer': None,
               'activity_regularizer': None, 'kernel_constraint': None, 'bias_constraint': None}
CONV = {'padding': 'valid', 'activation': None, 'use_bias': True,
        'kernel_initializer': 'glorot_uniform', 'bias_initializer': 'zeros', **REGULARIZED}
RECURRENT = {
    'activation': 'tanh', 'use_bias': True, 'kernel_initializer': 'glorot_uniform',
    'recurrent_initializer': 'orthogonal', 'bias_initializer': 'zeros',
    'kernel_regularizer': None, 'recurrent_regularizer': None, 'bias_regularizer': None,
    'activity_regularizer': None, 'kernel_constraint': None, 'recurrent_constraint': None,
    'bias_constraint': None, 'dropout': 0.0, 'recurrent_dropout': 0.0,
    'return_sequences': False, 'return_state': False, 'go_backwards': False, 'stateful': False,
    'unroll': False}
GATED = {**RECURRENT, 'recurrent_activation': 'sigmoid', 'implementation': 2}  # 2.3.1
POOLING_1D = {'pool_size': 2, 'strides': None, 'padding': 'valid', 'data_format': 'channels_last'}
POOLING_2D = {'pool_size': (2, 2), 'strides': None, 'padding': 'valid', 'data_format': None}

OPTIMIZERS = [
    (optimizers.SGD, (), {'lr': 0.01, 'momentum': 0.0, 'decay': 0.0, 'nesterov': False}),
    (optimizers.RMSprop, (), {'lr': 0.001, 'rho': 0.9, 'epsilon': None, 'decay': 0.0}),
    (optimizers.Adagrad, (), {'lr': 0.01, 'epsilon': None, 'decay': 0.0}),
    (optimizers.Adadelta, (), {'lr': 1.0, 'rho': 0.95, 'epsilon': None, 'decay': 0.0}),
    (optimizers.Adam, (), {'lr': 0.001, 'beta_1': 0.9, 'beta_2': 0.999, 'epsilon': None,
                           'decay': 0.0, 'amsgrad': False}),
    (optimizers.Adamax, (), {'lr': 0.002, 'beta_1': 0.9, 'beta_2': 0.999, 'epsilon': None,
                             'decay': 0.0}),
    (optimizers.Nadam, (), {'lr': 0.002, 'beta_1': 0.9, 'beta_2': 0.999, 'epsilon': None,
                            'schedule_decay': 0.004}),
]

LAYERS = [
    (layers.Dense, (4,), {'activation': None, 'use_bias': True,
                          'kernel_initializer': 'glorot_uniform', 'bias_initializer': 'zeros',
                          **REGULARIZED}),
    (layers.Dropout, (0.5,), {'noise_shape': None, 'seed': None}),
    (layers.Flatten, (), {'data_format': None}),
    (layers.Conv1D, (4, 3), {**CONV, 'strides': 1, 'data_format': 'channels_last',
                             'dilation_rate': 1}),
    (layers.Conv2D, (4, 3), {**CONV, 'strides': (1, 1), 'data_format': None,
                             'dilation_rate': (1, 1)}),
    (layers.MaxPooling1D, (), POOLING_1D),
    (layers.AveragePooling1D, (), POOLING_1D),
    (layers.MaxPooling2D, (), POOLING_2D),
    (layers.AveragePooling2D, (), POOLING_2D),
    (layers.GlobalMaxPooling1D, (), {'data_format': 'channels_last'}),
    (layers.GlobalAveragePooling1D, (), {'data_format': 'channels_last'}),
    (layers.GlobalMaxPooling2D, (), {'data_format': None}),
    (layers.GlobalAveragePooling2D, (), {'data_format': None}),
    (layers.ZeroPadding1D, (), {'padding': 1}),
    (layers.ZeroPadding2D, (), {'padding': (1, 1), 'data_format': None}),
    (layers.Cropping1D, (), {'cropping': (1, 1)}),
    (layers.Cropping2D, (), {'cropping': ((0, 0), (0, 0)), 'data_format': None}),
    (layers.UpSampling1D, (), {'size': 2}),
    (layers.UpSampling2D, (), {'size': (2, 2), 'data_format': None, 'interpolation': 'nearest'}),
    (layers.BatchNormalization, (), {
        'axis': -1, 'momentum': 0.99, 'epsilon': 0.001, 'center': True, 'scale': True,
        'beta_initializer': 'zeros', 'gamma_initializer': 'ones',
        'moving_mean_initializer': 'zeros', 'moving_variance_initializer': 'ones',
        'beta_regularizer': None, 'gamma_regularizer': None, 'beta_constraint': None,
        'gamma_constraint': None}),
    (layers.Embedding, (10, 3), {'embeddings_initializer': 'uniform',
                                 'embeddings_regularizer': None, 'activity_regularizer': None,
                                 'embeddings_constraint': None, 'mask_zero': False,
                                 'input_length': None}),
    (layers.SimpleRNN, (3,), RECURRENT),
    (layers.GRU, (3,), {**GATED, 'reset_after': False}),
    (layers.LSTM, (3,), {**GATED, 'unit_forget_bias': True}),
    (layers.Bidirectional, (layers.LSTM(2),), {'merge_mode': 'concat', 'weights': None}),
    (layers.Concatenate, (), {'axis': -1}),
    (layers.Dot, (1,), {'normalize': False}),
    (layers.AlphaDropout, (0.1,), {'noise_shape': None, 'seed': None}),
    (layers.InputLayer, ((3,),), {'batch_size': None, 'dtype': None, 'sparse': False}),
]

CALLBACKS = [
    (callbacks.EarlyStopping, (), {'monitor': 'val_loss', 'min_delta': 0, 'patience': 0,
                                   'verbose': 0, 'mode': 'auto', 'baseline': None,
                                   'restore_best_weights': False}),
    (callbacks.ModelCheckpoint, ('model.h5',), {
        'monitor': 'val_loss', 'verbose': 0, 'save_best_only': False,
        'save_weights_only': False, 'mode': 'auto', 'period': 1}),
    (callbacks.ReduceLROnPlateau, (), {'monitor': 'val_loss', 'factor': 0.1, 'patience': 10,
                                       'verbose': 0, 'mode': 'auto', 'min_delta': 1e-4,
                                       'cooldown': 0, 'min_lr': 0}),
    (callbacks.CSVLogger, ('log.csv',), {'separator': ',', 'append': False}),
    (callbacks.LearningRateScheduler, (abs,), {'verbose': 0}),
    (callbacks.ProgbarLogger, (), {'count_mode': 'samples', 'stateful_metrics': None}),
    (callbacks.TensorBoard, (), {
        'log_dir': './logs', 'histogram_freq': 0, 'batch_size': 32, 'write_graph': True,
        'write_grads': False, 'write_images': False, 'embeddings_freq': 0,
        'embeddings_layer_names': None, 'embeddings_metadata': None, 'embeddings_data': None,
        'update_freq': 'epoch'}),
    (callbacks.LambdaCallback, (), {'on_epoch_begin': None, 'on_epoch_end': None,
                                    'on_batch_begin': None, 'on_batch_end': None,
                                    'on_train_begin': None, 'on_train_end': None}),
]


def rows(table):
    return [pytest.param(cls, arguments, name, value, id=f'{cls.__name__}.{name}')
            for cls, arguments, defaults in table for name, value in defaults.items()]


def described(obj):
    """What an object is made of: its config (less its unique name), or a callback's attributes."""
    if hasattr(obj, 'get_config'):
        return {key: value for key, value in obj.get_config().items() if key != 'name'}
    return vars(obj)


def assert_default_is_kerass(cls, arguments, name, keras_value):
    left_out = described(cls(*arguments))
    given = described(cls(*arguments, **{name: keras_value}))
    assert given == left_out, f'{cls.__name__}({name}={keras_value!r}) differs from its default'


@pytest.mark.parametrize('cls, arguments, name, keras_value', rows(OPTIMIZERS))
def test_optimizer_defaults(cls, arguments, name, keras_value):
    assert_default_is_kerass(cls, arguments, name, keras_value)


@pytest.mark.parametrize('cls', [cls for cls, _, _ in OPTIMIZERS], ids=lambda cls: cls.__name__)
def test_optimizers_take_lr_and_learning_rate(cls):
    # Keras 2.2.4 names it lr, 2.3.1 learning_rate.
    assert cls(lr=0.25).learning_rate == 0.25 and cls(learning_rate=0.5).lr == 0.5
    assert cls(0.125).learning_rate == 0.125


@pytest.mark.parametrize('cls, arguments, name, keras_value', rows(LAYERS))
def test_layer_defaults(cls, arguments, name, keras_value):
    assert_default_is_kerass(cls, arguments, name, keras_value)


@pytest.mark.parametrize('cls, arguments, name, keras_value', rows(CALLBACKS))
def test_callback_defaults(cls, arguments, name, keras_value):
    assert_default_is_kerass(cls, arguments, name, keras_value)
