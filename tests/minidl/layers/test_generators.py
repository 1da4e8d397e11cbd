"""Random streams belong to layers and models: tracked, saved with them, isolated from others."""

import numpy as np

from minidl import layers, models
from minidl.compute import Generator, set_seed
from minidl.models import load_model
from tests.minidl.saving.builders import fresh


def dropout_model(seed=None):
    return models.Sequential([layers.Dense(6, input_shape=(4,)), layers.Dropout(0.5, seed=seed),
                              layers.Dense(2)])


def draws(model, x, count=3):
    """Outputs of ``count`` training-mode calls: they differ only through the dropout masks."""
    return [model(x, training=True).numpy() for _ in range(count)]


def test_a_layer_tracks_the_generators_assigned_to_it():
    dropout = layers.Dropout(0.5)
    assert dropout.named_generators() == [(f'{dropout.name}/generator', dropout.generator)]
    dropout.generator = None  # no longer a generator: no longer tracked
    assert dropout.named_generators() == []


def test_one_walk_finds_every_generator_of_a_nested_model_once():
    inner = dropout_model()
    inputs = layers.Input((5, 4))
    recurrent = layers.Bidirectional(layers.LSTM(3, dropout=0.2, return_sequences=True))
    pooled = layers.GlobalAveragePooling1D()(recurrent(inputs))
    outer = models.Model(inputs, inner(layers.Dense(4)(pooled)))
    names = [name for name, _ in outer.named_generators()]
    expected = {f'{outer.name}/shuffle_generator', f'{inner.name}/shuffle_generator',
                f'{inner.layers[1].name}/generator',
                f'{recurrent.forward_layer.name}_cell/generator',
                f'{recurrent.backward_layer.name}_cell/generator'}
    assert set(names) == expected and len(names) == len(expected)
    assert len({id(g) for _, g in outer.named_generators()}) == len(expected)


def test_set_seed_still_makes_a_script_repeatable():
    x = np.ones((2, 4), 'float32')
    set_seed(5)
    first = draws(dropout_model(), x)
    set_seed(5)
    again = draws(dropout_model(), x)
    set_seed(6)
    other = draws(dropout_model(), x)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_loading_a_model_leaves_another_models_draws_unchanged(tmp_path):
    x = np.ones((2, 4), 'float32')
    saved = dropout_model(seed=1)
    saved.compile('sgd', 'mse')
    saved.fit(Generator(2).normal((8, 4)), np.zeros((8, 2)), epochs=2, batch_size=4, verbose=0)
    path = tmp_path / 'saved.h5'
    saved.save(path)

    def run(load_between):
        fresh(7)
        model = dropout_model()  # its generator seeded from the default one
        first = draws(model, x)
        if load_between:
            loaded = load_model(path)  # restores the saved model's generators only
            draws(loaded, x)
        return first + draws(model, x)

    without, with_load = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(without, with_load))


def test_a_loaded_model_continues_the_saved_models_stream(tmp_path):
    x = np.ones((2, 4), 'float32')
    model = dropout_model()
    draws(model, x)
    model.save(tmp_path / 'model.h5')
    expected = draws(model, x)
    set_seed(99)  # the process's default stream is not what decides the loaded model's draws
    loaded = load_model(tmp_path / 'model.h5', compile=False)
    assert all(np.array_equal(a, b) for a, b in zip(draws(loaded, x), expected))
