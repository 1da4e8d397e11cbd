"""Full-model files written by tf-keras 2.21 load with tf-keras's predictions and optimizer state.

The files in tfkeras_fixtures/ were written by tf-keras itself
(tfkeras_fixtures/make_fixtures.py, run out of band; tf-keras is not a test
dependency). Each comes with tf-keras's predictions, and with the weights
tf-keras reached by one more training step from the saved state: minidl
taking the same step from the loaded file must reach them too, which holds
only if every optimizer array was matched to its parameter and slot.
"""

import json
import pathlib
import shutil
import warnings

import h5py
import numpy as np
import pytest

from minidl import layers, models, optimizers
from minidl.layers import Layer
from minidl.saving import load_model, model_from_json, tf_keras_compat

FIXTURES = pathlib.Path(__file__).parent / 'tfkeras_fixtures'
NAMES = ['mlp', 'mlp_sgd', 'mlp_legacy_adam', 'cnn_batchnorm', 'embedding_lstm',
         'bidirectional_gru', 'two_inputs_two_outputs', 'custom_layer']


class Scale(Layer):
    """minidl's version of the fixtures' custom layer: ``inputs * scale + offset``."""

    def __init__(self, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.offset = offset

    def build(self, input_shape):
        self.scale = self.add_weight('scale', (input_shape[-1],), initializer='ones')
        super().build(input_shape)

    def call(self, inputs):
        return inputs * self.scale + self.offset

    def get_config(self):
        return {**super().get_config(), 'offset': self.offset}


def load_quietly(path, custom_objects=None, **kwargs):
    """``load_model`` that fails on any warning (a dropped optimizer state warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        return load_model(path, custom_objects={'Scale': Scale, **(custom_objects or {})},
                          **kwargs)


def arrays(name, letter):
    data = np.load(FIXTURES / f'{name}.npz')
    count = sum(key.startswith(letter) for key in data)
    return [data[f'{letter}{index}'] for index in range(count)]


def one_or_list(values):
    return values[0] if len(values) == 1 else values


def editable_copy(tmp_path, name):
    path = tmp_path / f'{name}.h5'
    shutil.copy(FIXTURES / f'{name}.h5', path)
    return path


def edit_json(path, attribute, change):
    with h5py.File(path, 'r+') as file:
        value = json.loads(file.attrs[attribute])
        change(value)
        file.attrs[attribute] = json.dumps(value).encode('utf8')


def rename_optimizer_weights(path, rename):
    """Give every optimizer array of the file ``rename(name)`` as its name."""
    with h5py.File(path, 'r+') as file:
        group = file['optimizer_weights']
        names = [name.decode() if isinstance(name, bytes) else name
                 for name in group.attrs['weight_names']]
        values = [group[name][()] for name in names]
        for name in names:
            del group[name]
        for name, value in zip(names, values):
            group.create_dataset(rename(name), data=value)
        group.attrs['weight_names'] = np.array([rename(name).encode() for name in names])


def adam_config(value):
    return value['optimizer_config']['config']


def test_the_fixtures_are_small():
    assert sum(path.stat().st_size for path in FIXTURES.iterdir()) < 600_000


@pytest.mark.parametrize('name', NAMES)
def test_a_tf_keras_file_predicts_as_tf_keras_did(name):
    model = load_quietly(FIXTURES / f'{name}.h5')
    predictions = model.predict(one_or_list(arrays(name, 'x')))
    expected = arrays(name, 'y')
    predictions = predictions if isinstance(predictions, list) else [predictions]
    assert len(predictions) == len(expected)
    for predicted, truth in zip(predictions, expected):
        np.testing.assert_allclose(predicted, truth, rtol=0, atol=1e-6)


@pytest.mark.parametrize('name', NAMES)
def test_training_continues_from_the_saved_optimizer_state_as_in_tf_keras(name):
    model = load_quietly(FIXTURES / f'{name}.h5')
    assert model.optimizer.iterations == 2
    model.train_on_batch(one_or_list([x[:3] for x in arrays(name, 'x')]),
                         one_or_list(arrays(name, 't')))
    expected = arrays(name, 'w')
    weights = model.get_weights()
    assert len(weights) == len(expected)
    for weight, truth in zip(weights, expected):
        np.testing.assert_allclose(weight, truth, rtol=0, atol=1e-6)


def test_the_same_step_from_a_fresh_state_ends_elsewhere():
    """The step above tells a matched state from a dropped one (so it can fail)."""
    model = load_quietly(FIXTURES / 'mlp.h5')
    model.optimizer.set_weights([np.int64(0)] + [np.zeros_like(slot) for slot in
                                                 model.optimizer.get_weights()[1:]])
    model.train_on_batch(arrays('mlp', 'x')[0][:3], arrays('mlp', 't')[0])
    differences = [np.abs(weight - truth).max()
                   for weight, truth in zip(model.get_weights(), arrays('mlp', 'w'))]
    assert max(differences) > 1e-3


def test_the_adam_slots_are_the_file_arrays_of_the_same_name():
    model = load_quietly(FIXTURES / 'embedding_lstm.h5')
    lstm = model.get_layer('lstm')
    assert [weight.name for weight in lstm.weights] == [
        'lstm/kernel:0', 'lstm/recurrent_kernel:0', 'lstm/bias:0']
    with h5py.File(FIXTURES / 'embedding_lstm.h5', 'r') as file:
        saved = file['optimizer_weights']
        assert saved['iteration:0'][()] == 2
        for weight, file_name in zip(lstm.weights, ['kernel', 'recurrent_kernel', 'bias']):
            for slot in ('m', 'v'):
                np.testing.assert_array_equal(
                    model.optimizer.get_slot(weight, slot),
                    saved[f'Adam/{slot}/lstm/lstm_cell/{file_name}:0'][()])
        embedding = model.get_layer('embedding').weights[0]
        np.testing.assert_array_equal(model.optimizer.get_slot(embedding, 'v'),
                                      saved['Adam/v/embedding/embeddings:0'][()])


def test_sgd_momentum_is_the_file_m():
    model = load_quietly(FIXTURES / 'mlp_sgd.h5')
    kernel = model.layers[0].weights[0]
    with h5py.File(FIXTURES / 'mlp_sgd.h5', 'r') as file:
        np.testing.assert_array_equal(model.optimizer.get_slot(kernel, 'momentum'),
                                      file['optimizer_weights/SGD/m/dense/kernel:0'][()])


@pytest.mark.parametrize('key, value', [('use_ema', True), ('weight_decay', 0.004)])
def test_an_option_that_changes_the_updates_is_refused_naming_it(tmp_path, key, value):
    path = editable_copy(tmp_path, 'mlp')
    edit_json(path, 'training_config', lambda config: adam_config(config).update({key: value}))
    with pytest.raises(ValueError, match=rf"mlp\.h5.*'Custom>Adam'.*{key}={value!r}.*"
                                         rf"compile=False"):
        load_quietly(path)
    assert load_quietly(path, compile=False).optimizer is None


def test_options_that_do_not_change_the_updates_are_dropped(tmp_path):
    """Unused EMA settings, a zero weight decay and the family mark go quietly; jit_compile
    true (XLA: the same update) is named in a warning."""
    path = editable_copy(tmp_path, 'mlp')
    edit_json(path, 'training_config', lambda config: adam_config(config).update(
        {'ema_momentum': 0.5, 'ema_overwrite_frequency': 100, 'weight_decay': 0,
         'is_legacy_optimizer': True}))
    assert load_quietly(path).optimizer.iterations == 2
    edit_json(path, 'training_config',
              lambda config: adam_config(config).update({'jit_compile': True}))
    with pytest.warns(UserWarning, match=r"'Custom>Adam': ignored .*jit_compile=True") as caught:
        model = load_model(path)
    assert len(caught) == 1 and model.optimizer.iterations == 2


def test_loss_objects_load_and_ignore_class_is_refused(tmp_path):
    model = load_quietly(FIXTURES / 'two_inputs_two_outputs.h5')
    assert model.metrics_names == ['loss', 'label_loss', 'value_loss',
                                   'label_sparse_categorical_accuracy', 'value_mae']
    path = editable_copy(tmp_path, 'two_inputs_two_outputs')
    edit_json(path, 'training_config',
              lambda config: config['loss']['label']['config'].update(ignore_class=0))
    with pytest.raises(ValueError, match=r"loss 'SparseCategoricalCrossentropy'.*ignores the "
                                         r"class 0"):
        load_model(path)


def test_an_optimizer_class_of_your_own_gets_the_options_as_saved(tmp_path):
    path = editable_copy(tmp_path, 'mlp')
    edit_json(path, 'training_config', lambda config: adam_config(config).update(
        {'use_ema': True, 'ema_momentum': 0.9}))

    class AdamWithAverage(optimizers.Adam):
        def __init__(self, use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                     jit_compile=False, is_legacy_optimizer=False, weight_decay=None,
                     **kwargs):
            super().__init__(**kwargs)
            self.use_ema, self.ema_momentum = use_ema, ema_momentum
    model = load_quietly(path, custom_objects={'Custom>Adam': AdamWithAverage})
    assert model.optimizer.use_ema and model.optimizer.ema_momentum == 0.9
    assert model.optimizer.iterations == 2


def test_adamw_keeps_its_weight_decay(tmp_path):
    path = editable_copy(tmp_path, 'mlp')

    def to_adamw(config):
        config['optimizer_config']['class_name'] = 'Custom>AdamW'
        adam_config(config).update({'name': 'AdamW', 'weight_decay': 0.004})
    edit_json(path, 'training_config', to_adamw)
    rename_optimizer_weights(path, lambda name: name.replace('Adam/', 'AdamW/'))
    model = load_quietly(path)
    assert isinstance(model.optimizer, optimizers.AdamW)
    assert model.optimizer.weight_decay == 0.004 and model.optimizer.iterations == 2


def test_state_whose_names_do_not_match_is_dropped_with_a_warning(tmp_path):
    path = editable_copy(tmp_path, 'mlp')
    rename_optimizer_weights(path, lambda name: name.replace('m/dense/kernel', 'm/other/kernel'))
    with pytest.warns(UserWarning, match=r'm/dense/kernel:0.*fresh optimizer state'):
        model = load_model(path)
    assert model.optimizer.iterations == 0


def test_a_misshapen_slot_found_by_name_is_refused_before_it_is_read(tmp_path):
    path = editable_copy(tmp_path, 'mlp')
    with h5py.File(path, 'r+') as file:
        group = file['optimizer_weights']
        del group['Adam/v/dense/kernel:0']
        # Declares 16 GiB without storing any of it: must never be read.
        group.create_dataset('Adam/v/dense/kernel:0', shape=(2 ** 16, 2 ** 16), dtype='f4',
                             chunks=(1, 64))
    with pytest.warns(UserWarning, match=r'shape \(4, 5\).*has shape \(65536, 65536\).*fresh'):
        model = load_model(path)
    assert model.optimizer.iterations == 0


def test_package_class_names_resolve_through_custom_objects(tmp_path):
    x, expected = arrays('custom_layer', 'x')[0], arrays('custom_layer', 'y')[0]
    for custom_objects in ({'Scale': Scale}, {'fixtures>Scale': Scale}):
        model = load_model(FIXTURES / 'custom_layer.h5', custom_objects=custom_objects)
        assert model.layers[0].offset == 0.5
        np.testing.assert_allclose(model.predict(x), expected, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match=r"unknown layer class 'fixtures>Scale'"):
        load_model(FIXTURES / 'custom_layer.h5')


def test_a_lambda_layer_under_a_package_name_is_still_refused(tmp_path):
    path = editable_copy(tmp_path, 'mlp')

    def add_lambda(config):
        config['config']['layers'][1]['class_name'] = 'Custom>Lambda'
    edit_json(path, 'model_config', add_lambda)
    with pytest.raises(ValueError, match='Lambda layer'):
        load_model(path)


def test_an_optional_input_is_refused(tmp_path):
    path = editable_copy(tmp_path, 'mlp')
    edit_json(path, 'model_config',
              lambda config: config['config']['layers'][0]['config'].update(optional=True))
    with pytest.raises(ValueError, match=r"input 'input_1' is optional"):
        load_model(path)


def test_model_from_json_reads_a_tf_keras_description():
    with h5py.File(FIXTURES / 'bidirectional_gru.h5', 'r') as file:
        text = file.attrs['model_config']
    model = model_from_json(text)
    assert [type(layer).__name__ for layer in model.layers] == ['Bidirectional', 'Dense']
    assert model.layers[0].forward_layer.cell.reset_after


def test_a_gru_of_the_other_reset_after_is_refused_naming_it():
    model = models.Sequential([layers.Input((4, 3)),
                               layers.Bidirectional(layers.GRU(3, reset_after=False)),
                               layers.Dense(1)])
    with pytest.raises(ValueError, match=r'\(9,\) \(GRU\(reset_after=False\)\).*\(2, 9\) '
                                         r'\(GRU\(reset_after=True\)\).*reset_after'):
        model.load_weights(FIXTURES / 'bidirectional_gru.h5')


@pytest.mark.parametrize('translate', [tf_keras_compat.model_config,
                                       tf_keras_compat.training_config])
def test_a_description_nested_beyond_walking_is_refused(translate):
    deep = []
    for _ in range(100_000):  # built without recursion; walking it needs a call a level
        deep = [deep]
    name = translate.__name__
    with pytest.raises(ValueError, match=rf"'{name}' nests too deeply"):
        translate({'class_name': 'Sequential', 'config': {'layers': deep}, 'loss': deep}, {})
