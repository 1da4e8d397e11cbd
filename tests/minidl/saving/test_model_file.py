"""save_model / load_model: bitwise round trips, Keras 2's layout, compile options."""

import json

import h5py
import numpy as np
import pytest

from minidl import layers, losses, metrics, models
from minidl.compute import default_generator, set_seed
from minidl.layers.nest import flatten
from minidl.saving import load_model, save_model
from tests.minidl.saving.builders import (
    assert_same_bits, conv_model, fresh, functional_model, recurrent_model, sequential_model)

BUILDERS = [sequential_model, functional_model, conv_model, recurrent_model]


@pytest.mark.parametrize('build', BUILDERS, ids=lambda b: b.__name__)
def test_round_trip_predicts_and_keeps_training_bit_for_bit(build, tmp_path):
    fresh()
    model, x, y = build()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)  # so the optimizer has state
    saved_weights = model.get_weights()
    path = tmp_path / 'model.h5'
    model.save(path)
    default_generator().normal((3,))  # the file, not the process, must decide what follows

    loaded = load_model(path)
    assert type(loaded) is type(model)
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert_same_bits(loaded.get_weights(), saved_weights)
    assert_same_bits(loaded.optimizer.get_weights(), model.optimizer.get_weights())
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert loaded.metrics_names == model.metrics_names
    assert_same_bits(flatten(loaded.predict(x)), flatten(model.predict(x)))

    for trained in (model, loaded):
        set_seed(5)
        trained.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert_same_bits(loaded.get_weights(), model.get_weights())
    assert_same_bits(loaded.optimizer.get_weights(), model.optimizer.get_weights())
    assert any(a.tobytes() != b.tobytes() for a, b in zip(model.get_weights(), saved_weights))


def test_the_file_has_keras_2_layout(tmp_path):
    fresh()
    model, x, y = functional_model()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    path = tmp_path / 'model.h5'
    save_model(model, path)
    with h5py.File(path, 'r') as file:
        assert set(file.attrs) == {'keras_version', 'backend', 'model_config', 'training_config',
                                   'minidl_state'}
        # Keras 2 reads these as strings and checks that the version is 2.x.
        texts = [file.attrs[key] for key in ('keras_version', 'backend')]
        assert [text.decode() if isinstance(text, bytes) else text for text in texts] == \
            ['2.15.0', 'minidl']
        model_config = json.loads(file.attrs['model_config'])
        assert model_config['class_name'] == 'Model'
        assert [entry['name'] for entry in model_config['config']['layers']] == \
            [layer.name for layer in model.layers]
        training = json.loads(file.attrs['training_config'])
        assert training['loss'] == {'label': 'sparse_categorical_crossentropy', 'value': 'mse'}
        assert training['metrics'] == {'label': ['accuracy'], 'value': ['mae']}
        assert training['loss_weights'] == [1.0, 0.5]
        assert training['optimizer_config']['class_name'] == 'SGD'
        assert training['optimizer_config']['config']['momentum'] == 0.9

        group = file['model_weights']
        assert set(group.attrs) == {'layer_names', 'backend', 'keras_version'}
        names = [name.decode() for name in group.attrs['layer_names']]
        assert names == ['first', 'second', 'shared', 'concatenate', 'norm', 'label', 'value']
        assert len(group['first'].attrs['weight_names']) == 0
        assert [n.decode() for n in group['shared'].attrs['weight_names']] == \
            ['shared/kernel:0', 'shared/bias:0']
        assert [n.decode() for n in group['norm'].attrs['weight_names']] == [
            'norm/gamma:0', 'norm/beta:0', 'norm/moving_mean:0', 'norm/moving_variance:0']
        kernel = model.get_layer('shared').get_weights()[0]
        assert group['shared/shared/kernel:0'][()].tobytes() == kernel.tobytes()

        optimizer = file['optimizer_weights']
        optimizer_names = [n.decode() for n in optimizer.attrs['weight_names']]
        assert optimizer_names == model.optimizer.weight_names()
        assert optimizer_names[0] == 'SGD/iter:0' and optimizer['SGD/iter:0'][()] == 3
        state = json.loads(file.attrs['minidl_state'])
        assert state == {'layer_generators': {
            key: generator.get_state() for key, generator in model.named_generators()}}
        assert f'{model.name}/shuffle_generator' in state['layer_generators']


def test_without_optimizer_the_model_loads_uncompiled(tmp_path):
    fresh()
    model, x, _ = sequential_model()
    path = tmp_path / 'model.h5'
    model.save(path, include_optimizer=False)
    with h5py.File(path, 'r') as file:
        assert 'training_config' not in file.attrs and 'optimizer_weights' not in file
    with pytest.warns(UserWarning, match='not compiled'):
        loaded = load_model(path)
    assert loaded.optimizer is None
    assert_same_bits([loaded.predict(x)], [model.predict(x)])


def test_compile_false_ignores_the_training_config(tmp_path):
    fresh()
    model, _, _ = sequential_model()
    path = tmp_path / 'model.h5'
    model.save(path)
    assert load_model(path, compile=False).optimizer is None


def test_an_optimizer_that_never_stepped_writes_no_state_and_resumes_the_same(tmp_path):
    fresh()
    model, x, y = conv_model()
    path = tmp_path / 'model.h5'
    model.save(path)
    with h5py.File(path, 'r') as file:
        assert 'optimizer_weights' not in file
    loaded = load_model(path)
    for trained in (model, loaded):
        set_seed(1)
        trained.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert_same_bits(loaded.get_weights(), model.get_weights())


def test_overwrite_false_refuses_an_existing_file(tmp_path):
    fresh()
    model, _, _ = conv_model()
    path = tmp_path / 'model.h5'
    path.write_bytes(b'old')
    with pytest.raises(FileExistsError, match='overwrite'):
        save_model(model, path, overwrite=False)
    assert path.read_bytes() == b'old'
    save_model(model, tmp_path / 'new.h5', overwrite=False)
    assert np.array_equal(load_model(tmp_path / 'new.h5').get_weights()[0],
                          model.get_weights()[0])


def my_metric(y_true, y_pred):
    return losses.mean_absolute_error(y_true, y_pred) * 2.0


def test_losses_and_metrics_of_every_kind_come_back(tmp_path):
    fresh()
    model = models.Sequential([layers.Dense(2, input_shape=(3,))])
    model.compile('adam', losses.Huber(delta=2.0), metrics=[
        losses.MeanAbsoluteError(), metrics.RootMeanSquaredError(), 'mse', metrics.mae,
        my_metric, 'acc'])
    x, y = np.arange(12.0).reshape(4, 3), np.ones((4, 2))
    model.fit(x, y, verbose=0)
    path = tmp_path / 'model.h5'
    model.save(path)
    with pytest.raises(ValueError, match="unknown metric 'my_metric'.*custom_objects"):
        load_model(path)
    loaded = load_model(path, custom_objects={'my_metric': my_metric})
    assert isinstance(loaded.objectives.losses[0], losses.Huber)
    assert loaded.objectives.losses[0].get_config() == model.objectives.losses[0].get_config()
    assert loaded.metrics_names == model.metrics_names
    assert loaded.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)
