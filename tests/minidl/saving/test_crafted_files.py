"""Hostile and damaged files: refused with clear errors naming the file, nothing executed."""

import base64
import json
import marshal
import types

import h5py
import numpy as np
import pytest

from minidl import layers, models
from minidl.saving import load_model
from tests.minidl.saving.builders import assert_same_bits, fresh


@pytest.fixture
def saved(tmp_path):
    """A good full-model file of a small compiled Sequential model, and the model."""
    fresh()
    model = models.Sequential([layers.Dense(4, activation='relu', input_shape=(3,)),
                               layers.Dense(2)])
    model.compile('sgd', 'mse', metrics=['mae'])
    path = tmp_path / 'model.h5'
    model.save(path)
    return path, model


def edit(path, **attributes):
    """Replace (or with None delete) root attributes of an HDF5 file."""
    with h5py.File(path, 'r+') as file:
        for name, value in attributes.items():
            if value is None:
                del file.attrs[name]
            else:
                file.attrs[name] = value


def model_config(path):
    with h5py.File(path, 'r') as file:
        return json.loads(file.attrs['model_config'])


def test_a_lambda_layer_is_refused_at_save_time_leaving_the_old_file(saved, tmp_path):
    path, _ = saved
    before = path.read_bytes()
    inputs = layers.Input((3,))
    model = models.Model(inputs, layers.Lambda(lambda x: x * 2)(inputs))
    with pytest.raises(TypeError, match='Lambda'):
        model.save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['model.h5']


def test_a_keras_lambda_layer_is_refused_and_its_code_never_runs(saved, tmp_path):
    path, _ = saved
    marker = tmp_path / 'ran'

    def payload(x, marker=str(marker)):
        open(marker, 'w').close()
        return x

    code = base64.b64encode(marshal.dumps(payload.__code__)).decode('ascii')
    function = types.FunctionType(marshal.loads(base64.b64decode(code)),
                                  {'__builtins__': __builtins__}, None, (str(marker),))
    function(0)
    assert marker.exists()  # the payload works when run...
    marker.unlink()
    config = model_config(path)
    config['config']['layers'].append({'class_name': 'Lambda', 'config': {
        'name': 'lambda_1', 'trainable': True, 'dtype': 'float32', 'function': [code, None, None],
        'function_type': 'lambda', 'module': '__main__', 'output_shape': None,
        'output_shape_type': 'raw', 'output_shape_module': None, 'arguments': {}}})
    edit(path, model_config=json.dumps(config))
    with pytest.raises(ValueError, match=r"model\.h5.*'lambda_1' is a Lambda layer.*never runs"):
        load_model(path)
    assert not marker.exists()  # ...and loading never ran it


def test_an_unknown_class_is_refused_naming_it_unless_given_in_custom_objects(saved):
    path, model = saved
    config = model_config(path)
    config['config']['layers'][-1]['class_name'] = 'EvilLayer'
    edit(path, model_config=json.dumps(config))
    with pytest.raises(ValueError, match=r"model\.h5.*'EvilLayer'.*custom_objects"):
        load_model(path)
    loaded = load_model(path, custom_objects={'EvilLayer': layers.Dense})
    assert_same_bits(loaded.get_weights(), model.get_weights())


EVIL = "__import__('os').system('touch {marker}')"


@pytest.mark.parametrize('field', ['loss', 'metrics', 'optimizer_config'])
def test_code_in_the_training_config_is_an_unknown_name_and_never_runs(saved, tmp_path, field):
    path, _ = saved
    marker = tmp_path / 'ran'
    evil = EVIL.format(marker=marker)
    with h5py.File(path, 'r') as file:
        training = json.loads(file.attrs['training_config'])
    training[field] = {'loss': evil, 'metrics': [evil],
                       'optimizer_config': {'class_name': evil, 'config': {}}}[field]
    edit(path, training_config=json.dumps(training))
    kind = {'loss': 'loss', 'metrics': 'metric', 'optimizer_config': 'optimizer'}[field]
    with pytest.raises(ValueError, match=rf'model\.h5.*{kind}.*__import__'):
        load_model(path)
    assert not marker.exists()
    assert load_model(path, compile=False).optimizer is None


@pytest.mark.parametrize('attributes, message', [
    ({'model_config': None}, "no 'model_config' attribute"),
    ({'model_config': '{"class_name": "Sequential", '}, "'model_config' is not valid JSON"),
    ({'model_config': '[1, 2]'}, "'model_config' must be an object"),
    ({'model_config': '{"config": ' + '[' * 100_000 + ']' * 100_000 + '}'},
     "'model_config' nests too deeply"),
    ({'model_config': np.int64(3)}, "'model_config' should be a string"),
    ({'model_config': '{"class_name": "Sequential", "config": {"layers": 3}}'},
     'Sequential config'),
    ({'training_config': '"adam"'}, "'training_config' must be a JSON object"),
    ({'training_config': '{"loss": "mse", "optimizer_config": "sgd"}'}, "'optimizer_config'"),
    ({'minidl_state': '{"layer_generators": {"sequential/shuffle_generator": '
                      '{"bit_generator": "PCG64", "state": 1}}}'},
     'invalid generator state'),
    ({'minidl_state': '{"default_generator": {"bit_generator": "PCG64", "state": {}}}'},
     "'layer_generators' states by name"),
], ids=['missing', 'bad-json', 'list', 'nested', 'number', 'bad-layers', 'string-training',
        'string-optimizer', 'bad-rng', 'no-layer-generators'])
def test_malformed_attributes_are_refused_clearly(saved, attributes, message):
    path, _ = saved
    edit(path, **attributes)
    with pytest.raises(ValueError, match=message) as error:
        load_model(path)
    assert str(path) in str(error.value)


def test_damaged_weight_groups_are_refused_clearly(saved):
    path, _ = saved
    with h5py.File(path, 'r+') as file:
        file['model_weights'].attrs['layer_names'] = np.array([1, 2])
    with pytest.raises(ValueError, match="'layer_names' should be a list of strings"):
        load_model(path)
    with h5py.File(path, 'r+') as file:
        file['model_weights'].attrs['layer_names'] = np.array([b'dense', b'dense_1'])
        del file['model_weights/dense_1/dense_1/bias:0']
    with pytest.raises(ValueError, match=r"model\.h5.*'dense_1/bias:0', which is missing"):
        load_model(path)


@pytest.mark.parametrize('keep', [0.97, 0.5, 0.02])
def test_a_truncated_file_is_refused_naming_the_file(saved, tmp_path, keep):
    path, model = saved
    data = path.read_bytes()
    cut = tmp_path / 'cut.h5'
    cut.write_bytes(data[:int(len(data) * keep)])
    for load in (load_model, model.load_weights):
        with pytest.raises(ValueError, match=r'cut\.h5.*truncated or damaged') as error:
            load(cut)
        assert isinstance(error.value.__cause__, OSError)


def test_not_hdf5_and_missing_files(tmp_path):
    text = tmp_path / 'notes.h5'
    text.write_text('{"class_name": "Sequential"}')
    with pytest.raises(ValueError, match=r'notes\.h5.*not a readable HDF5 file'):
        load_model(text)
    with pytest.raises(FileNotFoundError, match='missing.h5'):
        load_model(tmp_path / 'missing.h5')
    with pytest.raises(TypeError, match='filepath'):
        load_model(3)
