"""save_weights / load_weights: in order, by name, skipping mismatches, with clear errors."""

import h5py
import numpy as np
import pytest

from minidl import layers, models
from minidl.saving import load_weights, save_model, save_weights
from tests.minidl.saving.builders import assert_same_bits, fresh, functional_model


def mlp(units=(8, 3), names=(None, None), input_size=5):
    model = models.Sequential()
    model.add(layers.Dense(units[0], activation='relu', input_shape=(input_size,),
                           name=names[0]))
    model.add(layers.Dropout(0.5))
    model.add(layers.Dense(units[1], name=names[1]))
    return model


def test_round_trip_into_a_new_model_of_the_same_architecture(tmp_path):
    fresh()
    source, target = functional_model()[0], functional_model()[0]
    path = tmp_path / 'weights.h5'
    source.save_weights(path)
    with h5py.File(path, 'r') as file:
        assert [n.decode() for n in file.attrs['layer_names']] == \
            [layer.name for layer in source.layers]
        assert file.attrs['backend'] and file.attrs['keras_version']
        assert 'model_config' not in file.attrs
        assert file['norm/norm/moving_variance:0'].shape == (12,)
    assert any(a.tobytes() != b.tobytes()
               for a, b in zip(source.get_weights(), target.get_weights()))
    target.load_weights(path)  # layer names differ ('shared_1', ...): matched in order
    assert_same_bits(target.get_weights(), source.get_weights())


def test_loads_the_weights_of_a_full_model_file(tmp_path):
    fresh()
    source, target = mlp(), mlp()
    save_model(source, tmp_path / 'model.h5')
    load_weights(target, tmp_path / 'model.h5')
    assert_same_bits(target.get_weights(), source.get_weights())


def test_in_order_errors_name_layers_and_shapes_and_change_nothing(tmp_path):
    fresh()
    path = tmp_path / 'weights.h5'
    save_weights(mlp(), path)
    wider = mlp(units=(8, 4))
    before = wider.get_weights()
    with pytest.raises(ValueError, match=r"layer #1 'dense_3'.*\(8, 4\).*\(8, 3\)") as error:
        wider.load_weights(path)
    assert str(path) in str(error.value)
    assert_same_bits(wider.get_weights(), before)  # the first layer fitted but was not set

    deeper = models.Sequential([layers.Dense(8, input_shape=(5,)), layers.Dense(8),
                                layers.Dense(3)])
    with pytest.raises(ValueError, match=r'2 layer\(s\).*3 layer\(s\)'):
        deeper.load_weights(path)


def test_by_name_loads_matching_layers_and_leaves_the_others(tmp_path):
    fresh()
    source = mlp(names=('hidden', 'out'))
    path = tmp_path / 'weights.h5'
    source.save_weights(path)
    target = mlp(names=('hidden', 'other'))
    other_before = target.get_layer('other').get_weights()
    target.load_weights(path, by_name=True)
    assert_same_bits(target.get_layer('hidden').get_weights(),
                     source.get_layer('hidden').get_weights())
    assert_same_bits(target.get_layer('other').get_weights(), other_before)


def test_by_name_mismatch_raises_or_with_skip_mismatch_warns_and_skips(tmp_path):
    fresh()
    source = mlp(names=('hidden', 'out'))
    path = tmp_path / 'weights.h5'
    source.save_weights(path)
    target = mlp(units=(8, 4), names=('hidden', 'out'))
    before = target.get_weights()
    with pytest.raises(ValueError, match=r"'out'.*out/kernel:0.*\(8, 4\).*\(8, 3\)"):
        target.load_weights(path, by_name=True)
    assert_same_bits(target.get_weights(), before)

    with pytest.warns(UserWarning, match="skipping the weights of layer 'out'"):
        target.load_weights(path, by_name=True, skip_mismatch=True)
    assert_same_bits(target.get_layer('hidden').get_weights(),
                     source.get_layer('hidden').get_weights())
    assert_same_bits(target.get_layer('out').get_weights(), before[2:])


def test_skip_mismatch_needs_by_name(tmp_path):
    fresh()
    model = mlp()
    model.save_weights(tmp_path / 'weights.h5')
    with pytest.raises(ValueError, match='by_name'):
        model.load_weights(tmp_path / 'weights.h5', skip_mismatch=True)


def _write_keras_weights(path, layer_names, weights):
    """A weights file exactly as Keras 2 (tf.keras, h5py) writes it."""
    with h5py.File(path, 'w') as file:
        file.attrs['layer_names'] = np.array([n.encode('utf8') for n in layer_names])
        file.attrs['backend'] = b'tensorflow'
        file.attrs['keras_version'] = b'2.4.0'
        for name in layer_names:
            group = file.create_group(name)
            arrays = weights.get(name, {})
            group.attrs['weight_names'] = np.asarray([n.encode('utf8') for n in arrays])
            for weight_name, array in arrays.items():
                group.create_dataset(weight_name, data=array)


def test_loads_a_file_written_by_keras_2(tmp_path):
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((5, 8)).astype('f4'), rng.standard_normal(8).astype('f4')
    w2, b2 = rng.standard_normal((8, 3)).astype('f4'), rng.standard_normal(3).astype('f4')
    path = tmp_path / 'keras.h5'
    _write_keras_weights(path, ['input_1', 'dense_1', 'dropout_1', 'dense_2'], {
        'dense_1': {'dense_1/kernel:0': w1, 'dense_1/bias:0': b1},
        'dense_2': {'dense_2/kernel:0': w2, 'dense_2/bias:0': b2}})
    with h5py.File(path, 'r') as file:
        assert file['dense_1/dense_1/kernel:0'].shape == (5, 8)  # the layout under test
    x = rng.standard_normal((4, 5)).astype('f4')
    expected = np.maximum(x @ w1 + b1, 0) @ w2 + b2

    fresh()
    in_order = mlp()
    in_order.load_weights(path)
    np.testing.assert_allclose(in_order.predict(x), expected, rtol=1e-5, atol=1e-5)
    by_name = mlp(names=('dense_1', 'dense_2'))
    by_name.load_weights(path, by_name=True)
    assert_same_bits(by_name.get_weights(), [w1, b1, w2, b2])


def test_a_file_without_layer_names_is_refused_clearly(tmp_path):
    path = tmp_path / 'empty.h5'
    with h5py.File(path, 'w') as file:
        file.create_group('something')
    with pytest.raises(ValueError, match=r"empty\.h5.*'layer_names' is missing"):
        mlp().load_weights(path)
