"""``import minidl as keras``: Keras 2's names and module paths resolve, to the same objects."""

import importlib

import pytest

import minidl
import minidl as keras

# Keras 2 module path -> names a script imports from it, and where minidl defines them.
MODULE_PATHS = {
    'layers.core': {'Dense': 'layers.Dense', 'Activation': 'layers.Activation',
                    'Dropout': 'layers.Dropout', 'Flatten': 'layers.Flatten',
                    'Lambda': 'layers.Lambda', 'Reshape': 'layers.Reshape'},
    'layers.convolutional': {'Conv2D': 'layers.Conv2D', 'Conv1D': 'layers.Conv1D',
                             'MaxPooling2D': 'layers.MaxPooling2D',
                             'ZeroPadding2D': 'layers.ZeroPadding2D',
                             'UpSampling2D': 'layers.UpSampling2D',
                             'Convolution2D': 'layers.Conv2D'},
    'layers.pooling': {'MaxPooling2D': 'layers.MaxPooling2D',
                       'GlobalAveragePooling1D': 'layers.GlobalAveragePooling1D'},
    'layers.recurrent': {'LSTM': 'layers.LSTM', 'GRU': 'layers.GRU',
                         'SimpleRNN': 'layers.SimpleRNN'},
    'layers.embeddings': {'Embedding': 'layers.Embedding'},
    'layers.normalization': {'BatchNormalization': 'layers.BatchNormalization'},
    'layers.merge': {'Concatenate': 'layers.Concatenate', 'add': 'layers.add',
                     'concatenate': 'layers.concatenate'},
    'layers.noise': {'GaussianNoise': 'layers.GaussianNoise',
                     'GaussianDropout': 'layers.GaussianDropout',
                     'AlphaDropout': 'layers.AlphaDropout'},
    'layers.wrappers': {'TimeDistributed': 'layers.TimeDistributed',
                        'Bidirectional': 'layers.Bidirectional'},
    'engine': {'Layer': 'layers.Layer', 'Input': 'layers.Input', 'InputSpec': 'layers.InputSpec',
               'Model': 'models.Model'},
    'engine.topology': {'Layer': 'layers.Layer', 'InputSpec': 'layers.InputSpec',
                        'get_source_inputs': 'engine.get_source_inputs'},
    'engine.training': {'Model': 'models.Model'},
    'utils.np_utils': {'to_categorical': 'utils.to_categorical', 'normalize': 'utils.normalize'},
    'utils.generic_utils': {'CustomObjectScope': 'utils.CustomObjectScope',
                            'custom_object_scope': 'utils.custom_object_scope',
                            'get_custom_objects': 'utils.get_custom_objects'},
    'utils.test_utils': {'layer_test': 'utils.test_utils.layer_test'},
    'utils.data_utils': {'get_file': 'utils.get_file', 'Sequence': 'utils.Sequence'},
    'preprocessing.sequence': {'pad_sequences': 'utils.pad_sequences'},
}


def resolve(dotted):
    """The object at ``minidl.<dotted>``."""
    value = minidl
    for part in dotted.split('.'):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize('path', sorted(MODULE_PATHS))
def test_keras_module_paths_give_minidls_objects(path):
    module = importlib.import_module(f'minidl.{path}')
    for name, home in MODULE_PATHS[path].items():
        assert getattr(module, name) is resolve(home), f'minidl.{path}.{name}'


def test_the_top_level_namespace_is_keras_2s():
    assert keras.Sequential is minidl.models.Sequential
    assert keras.Model is minidl.models.Model
    assert keras.Input is minidl.layers.Input
    assert keras.layers.Dense is minidl.layers.core.Dense
    assert keras.utils.to_categorical([1], 3).tolist() == [[0.0, 1.0, 0.0]]
    for module in ['activations', 'backend', 'callbacks', 'constraints', 'datasets', 'engine',
                   'initializers', 'layers', 'losses', 'metrics', 'models', 'optimizers',
                   'preprocessing', 'regularizers', 'utils']:
        assert importlib.import_module(f'minidl.{module}') is getattr(keras, module)


def test_keras_backend_is_the_keras_backend():
    from minidl import backend as K
    assert K.epsilon() == 1e-7 and K.floatx() == 'float32'
    assert K.image_data_format() == 'channels_last'


def test_lowercase_optimizer_aliases_are_the_classes():
    for alias, cls in [('sgd', 'SGD'), ('rmsprop', 'RMSprop'), ('adagrad', 'Adagrad'),
                       ('adadelta', 'Adadelta'), ('adam', 'Adam'), ('adamax', 'Adamax'),
                       ('nadam', 'Nadam')]:
        assert getattr(keras.optimizers, alias) is getattr(keras.optimizers, cls)
    assert keras.optimizers.rmsprop(lr=0.1).get_config()['learning_rate'] == pytest.approx(0.1)
