"""to_json / model_from_json / model_from_config, and models.save_model, in Keras 2's layout."""

import json

import numpy as np
import pytest

import minidl
from minidl import models
from minidl.layers import LSTM, Concatenate, Dense, Dropout, Input, Lambda, Layer
from minidl.layers.nest import flatten
from minidl.models import Model, Sequential

X = np.random.default_rng(0).standard_normal((5, 4)).astype('float32')

# What Keras 2.2.4's to_json() writes for Sequential([Dense(3, 'relu', input_shape=(4,)),
# Dense(2, 'softmax')]).
KERAS_224_JSON = json.dumps({
    'class_name': 'Sequential', 'keras_version': '2.2.4', 'backend': 'tensorflow',
    'config': {'name': 'sequential_1', 'layers': [
        {'class_name': 'Dense', 'config': {
            'name': f'dense_{index}', 'trainable': True, 'dtype': 'float32', 'units': units,
            'activation': activation, 'use_bias': True,
            'kernel_initializer': {'class_name': 'VarianceScaling', 'config': {
                'scale': 1.0, 'mode': 'fan_avg', 'distribution': 'uniform', 'seed': None}},
            'bias_initializer': {'class_name': 'Zeros', 'config': {}},
            'kernel_regularizer': None, 'bias_regularizer': None, 'activity_regularizer': None,
            'kernel_constraint': None, 'bias_constraint': None,
            **({'batch_input_shape': [None, 4]} if index == 1 else {})}}
        for index, units, activation in ((1, 3, 'relu'), (2, 2, 'softmax'))]}})


def _functional():
    """Two inputs, a layer shared between them, two outputs."""
    minidl.set_seed(0)
    left, right = Input((4,), name='left'), Input((4,), name='right')
    shared = Dense(3, activation='tanh', name='shared')
    merged = Concatenate(name='merged')([shared(left), shared(right)])
    return Model([left, right], [Dense(2, name='first')(merged),
                                 Dense(1, name='second')(Dropout(0.5)(merged))])


def _sequential():
    minidl.set_seed(0)
    return Sequential([LSTM(3, input_shape=(None, 4), return_sequences=True), Dense(2)])


@pytest.mark.parametrize('make, data', [(_functional, [X, -X]), (_sequential, X[:, None, :])])
def test_the_round_trip_gives_the_same_config_and_with_the_weights_the_same_predictions(
        make, data):
    model = make()
    text = model.to_json()
    description = json.loads(text)
    assert description == {'class_name': type(model).__name__, 'config': model.get_config(),
                           'keras_version': description['keras_version'], 'backend': 'minidl'}
    rebuilt = models.model_from_json(text)
    assert type(rebuilt) is type(model)
    assert rebuilt.get_config() == model.get_config()
    assert rebuilt.to_json(indent=2) == model.to_json(indent=2) != text  # kwargs reach json
    rebuilt.set_weights(model.get_weights())
    for ours, theirs in zip(flatten(rebuilt.predict(data)), flatten(model.predict(data))):
        np.testing.assert_array_equal(ours, theirs)


def test_keras_224_json_loads_and_computes_the_keras_network():
    model = models.model_from_json(KERAS_224_JSON)
    rng = np.random.default_rng(1)
    w1, b1 = rng.standard_normal((4, 3)).astype('f4'), rng.standard_normal(3).astype('f4')
    w2, b2 = rng.standard_normal((3, 2)).astype('f4'), rng.standard_normal(2).astype('f4')
    model.set_weights([w1, b1, w2, b2])
    logits = np.maximum(X @ w1 + b1, 0) @ w2 + b2
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-5)
    assert [layer.name for layer in model.layers] == ['dense_1', 'dense_2']


class Scale(Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), 'factor': self.factor}


def test_custom_layers_come_from_custom_objects_and_code_never_loads():
    model = Sequential([Dense(2, input_shape=(4,)), Scale(3.0)])
    with pytest.raises(ValueError, match="'Scale'"):
        models.model_from_json(model.to_json())
    rebuilt = models.model_from_json(model.to_json(), custom_objects={'Scale': Scale})
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_array_equal(rebuilt.predict(X), model.predict(X))

    keras_lambda = json.loads(KERAS_224_JSON)
    keras_lambda['config']['layers'].append({'class_name': 'Lambda', 'config': {
        'name': 'lambda_1', 'function': ['4wEAAAA...', None, None], 'function_type': 'lambda'}})
    with pytest.raises(ValueError, match='Lambda layer'):
        models.model_from_json(json.dumps(keras_lambda))
    with pytest.raises(TypeError, match='Lambda layer'):
        Sequential([Lambda(lambda t: t, input_shape=(4,))]).to_json()


def test_malformed_input_is_refused_clearly():
    with pytest.raises(ValueError, match='not valid JSON'):
        models.model_from_json('{"class_name": ')
    with pytest.raises(TypeError, match='not a list'):
        models.model_from_config(json.loads(KERAS_224_JSON)['config']['layers'])
    with pytest.raises(ValueError, match="'class_name' string"):
        models.model_from_config({'config': {}})
    with pytest.raises(NotImplementedError, match='to_json'):
        _sequential().to_yaml()


def test_models_save_model_writes_a_file_load_model_reads(tmp_path):
    model = _functional()
    model.compile('adam', ['mse', 'mae'])
    models.save_model(model, tmp_path / 'model.h5', include_optimizer=False)
    with pytest.warns(UserWarning, match='not compiled'):
        loaded = models.load_model(tmp_path / 'model.h5')
    for ours, theirs in zip(loaded.predict([X, X]), model.predict([X, X])):
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(FileExistsError):
        models.save_model(model, tmp_path / 'model.h5', overwrite=False)


def test_deeply_nested_json_is_refused_as_a_value_error():
    # json.loads recurses once per level: 100,000 levels exhaust the interpreter's stack.
    nested = '{"class_name": "Sequential", "config": ' + '[' * 100_000 + ']' * 100_000 + '}'
    with pytest.raises(ValueError, match='nests too deeply'):
        models.model_from_json(nested)
