"""Full-model files written by hand exactly as Keras 2 (tf.keras 2.x with h5py) writes them."""

import json

import h5py
import numpy as np
import pytest

from minidl import models
from minidl.saving import load_model

RNG = np.random.default_rng(0)
W1, B1 = RNG.standard_normal((4, 8)).astype('f4'), RNG.standard_normal(8).astype('f4')
W2, B2 = RNG.standard_normal((8, 2)).astype('f4'), RNG.standard_normal(2).astype('f4')
GAMMA, BETA = RNG.uniform(0.5, 2, 8).astype('f4'), RNG.standard_normal(8).astype('f4')
MEAN, VARIANCE = RNG.standard_normal(8).astype('f4'), RNG.uniform(0.5, 2, 8).astype('f4')
X = RNG.standard_normal((5, 4)).astype('f4')


def dense(name, units, activation, input_shape=None):
    config = {
        'name': name, 'trainable': True, 'dtype': 'float32', 'units': units,
        'activation': activation, 'use_bias': True,
        'kernel_initializer': {'class_name': 'GlorotUniform', 'config': {'seed': None}},
        'bias_initializer': {'class_name': 'Zeros', 'config': {}}, 'kernel_regularizer': None,
        'bias_regularizer': None, 'activity_regularizer': None, 'kernel_constraint': None,
        'bias_constraint': None}
    if input_shape:
        config['batch_input_shape'] = [None, *input_shape]
    return {'class_name': 'Dense', 'config': config}


def input_layer(name):
    return {'class_name': 'InputLayer', 'config': {
        'batch_input_shape': [None, 4], 'dtype': 'float32', 'sparse': False, 'ragged': False,
        'name': name}}


BATCH_NORMALIZATION = {'class_name': 'BatchNormalization', 'config': {
    'name': 'batch_normalization', 'trainable': True, 'dtype': 'float32', 'axis': [1],
    'momentum': 0.99, 'epsilon': 0.001, 'center': True, 'scale': True,
    'beta_initializer': {'class_name': 'Zeros', 'config': {}},
    'gamma_initializer': {'class_name': 'Ones', 'config': {}},
    'moving_mean_initializer': {'class_name': 'Zeros', 'config': {}},
    'moving_variance_initializer': {'class_name': 'Ones', 'config': {}},
    'beta_regularizer': None, 'gamma_regularizer': None, 'beta_constraint': None,
    'gamma_constraint': None}}

ADAM = {'class_name': 'Adam', 'config': {
    'name': 'Adam', 'learning_rate': 0.001, 'decay': 0.0, 'beta_1': 0.9, 'beta_2': 0.999,
    'epsilon': 1e-07, 'amsgrad': False}}


def write(path, model_config, training_config, layers, optimizer_weights=None, as_bytes=True):
    """``layers``: [(layer name, {weight name: array})], in the model's layer order."""
    encode = (lambda value: json.dumps(value).encode('utf8')) if as_bytes else json.dumps
    with h5py.File(path, 'w') as file:
        file.attrs['keras_version'] = b'2.4.0'
        file.attrs['backend'] = b'tensorflow'
        file.attrs['model_config'] = encode(model_config)
        file.attrs['training_config'] = encode(training_config)
        group = file.create_group('model_weights')
        group.attrs['layer_names'] = np.array([name.encode('utf8') for name, _ in layers])
        group.attrs['backend'] = b'tensorflow'
        group.attrs['keras_version'] = b'2.4.0'
        for name, weights in layers:
            layer_group = group.create_group(name)
            layer_group.attrs['weight_names'] = np.asarray([n.encode('utf8') for n in weights])
            for weight_name, array in weights.items():
                layer_group.create_dataset(weight_name, data=array)
        if optimizer_weights:
            optimizer = file.create_group('optimizer_weights')
            optimizer.attrs['weight_names'] = np.array([n.encode() for n in optimizer_weights])
            for name, array in optimizer_weights.items():
                optimizer.create_dataset(name, data=array)


@pytest.mark.parametrize('as_bytes', [True, False], ids=['bytes-attrs', 'str-attrs'])
def test_a_keras_sequential_file_loads_compiled_with_its_optimizer_state(tmp_path, as_bytes):
    model_config = {'class_name': 'Sequential', 'config': {'name': 'sequential', 'layers': [
        input_layer('dense_input'), dense('dense', 8, 'relu', (4,)), dense('dense_1', 2,
                                                                           'linear')]}}
    training_config = {
        'loss': 'mse', 'weighted_metrics': None, 'loss_weights': None, 'optimizer_config': ADAM,
        'metrics': ['mae', {'class_name': 'MeanMetricWrapper', 'config': {
            'name': 'mean_absolute_error', 'dtype': 'float32', 'fn': 'mean_absolute_error'}}]}
    weights = {'dense/kernel:0': W1, 'dense/bias:0': B1, 'dense_1/kernel:0': W2,
               'dense_1/bias:0': B2}
    optimizer = {'Adam/iter:0': np.int64(7)}
    for slot in ('m', 'v'):
        optimizer.update({f'Adam/{name[:-2]}/{slot}:0': np.full_like(array, 0.5)
                          for name, array in weights.items()})
    path = tmp_path / 'keras.h5'
    items = list(weights.items())
    write(path, model_config, training_config,
          [('dense', dict(items[:2])), ('dense_1', dict(items[2:]))], optimizer, as_bytes)

    model = load_model(path)
    assert isinstance(model, models.Sequential)
    np.testing.assert_allclose(model.predict(X), np.maximum(X @ W1 + B1, 0) @ W2 + B2,
                               rtol=1e-5, atol=1e-5)
    assert model.metrics_names == ['loss', 'mae', 'mean_absolute_error']
    assert model.optimizer.get_config()['epsilon'] == 1e-07
    assert model.optimizer.iterations == 7
    assert all(np.all(slot == 0.5) for slot in model.optimizer.get_weights()[1:])


def test_a_keras_functional_file_with_batch_normalization_loads(tmp_path):
    model_config = {'class_name': 'Functional', 'config': {
        'name': 'model', 'input_layers': [['input_1', 0, 0]],
        'output_layers': [['dense_1', 0, 0]], 'layers': [
            {**input_layer('input_1'), 'name': 'input_1', 'inbound_nodes': []},
            {**dense('dense', 8, 'linear'), 'name': 'dense',
             'inbound_nodes': [[['input_1', 0, 0, {}]]]},
            {**BATCH_NORMALIZATION, 'name': 'batch_normalization',
             'inbound_nodes': [[['dense', 0, 0, {}]]]},
            {**dense('dense_1', 2, 'softmax'), 'name': 'dense_1',
             'inbound_nodes': [[['batch_normalization', 0, 0, {}]]]}]}}
    training_config = {'loss': 'categorical_crossentropy', 'metrics': ['accuracy'],
                       'weighted_metrics': None, 'loss_weights': None, 'optimizer_config': ADAM}
    path = tmp_path / 'keras.h5'
    write(path, model_config, training_config, [
        ('input_1', {}),
        ('dense', {'dense/kernel:0': W1, 'dense/bias:0': B1}),
        ('batch_normalization', {'batch_normalization/gamma:0': GAMMA,
                                 'batch_normalization/beta:0': BETA,
                                 'batch_normalization/moving_mean:0': MEAN,
                                 'batch_normalization/moving_variance:0': VARIANCE}),
        ('dense_1', {'dense_1/kernel:0': W2, 'dense_1/bias:0': B2})])

    model = load_model(path)
    assert isinstance(model, models.Model) and model.layers[0].name == 'input_1'
    hidden = (X @ W1 + B1 - MEAN) / np.sqrt(VARIANCE + 0.001) * GAMMA + BETA
    logits = hidden @ W2 + B2
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-4, atol=1e-6)
    assert model.metrics_names == ['loss', 'accuracy']
