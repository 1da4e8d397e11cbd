"""Functional and Sequential models: graphs, shapes, counts, summary, configs, errors."""

import json

import numpy as np
import pytest

import minidl
from minidl.layers import (
    LSTM, BatchNormalization, Concatenate, Conv2D, Dense, Dropout, Flatten, Input, MaxPooling2D,
    ZeroPadding2D, add)
from minidl.models import Model, Sequential


def alexnet():
    """The AlexNet of the project's design brief, as a Keras 2 user writes it."""
    model = Sequential()
    model.add(ZeroPadding2D(2, input_shape=(224, 224, 3)))
    model.add(Conv2D(64, 11, strides=4, activation='relu'))
    model.add(MaxPooling2D(3, strides=2))
    model.add(Conv2D(192, 5, padding='same', activation='relu'))
    model.add(MaxPooling2D(3, strides=2))
    model.add(Conv2D(384, 3, padding='same', activation='relu'))
    model.add(Conv2D(256, 3, padding='same', activation='relu'))
    model.add(MaxPooling2D(3, strides=2))
    model.add(Flatten())
    model.add(Dropout(0.5))
    model.add(Dense(4096, activation='relu', input_shape=(6 * 6 * 256,)))
    model.add(Dropout(0.5))
    model.add(Dense(4096, activation='relu'))
    model.add(Dense(10))
    return model


def test_alexnet_counts_keras_parameters():
    model = alexnet()
    assert model.output_shape == (None, 10)
    assert model.get_layer(index=7).output_shape == (None, 6, 6, 256)
    assert model.count_params() == 56_454_730
    lines = []
    model.summary(print_fn=lines.append)
    assert 'Total params: 56,454,730' in lines
    assert 'Trainable params: 56,454,730' in lines
    assert 'Non-trainable params: 0' in lines


def test_summary_matches_keras_table():
    minidl.clear_session()
    model = Sequential([Dense(512, activation='relu', input_shape=(784,)),
                        BatchNormalization(), Dense(10, activation='softmax')])
    lines = []
    model.summary(print_fn=lines.append)
    assert lines[0] == 'Model: "sequential"'
    assert lines[2].rstrip() == 'Layer (type)                 Output Shape              Param #'
    assert lines[4].rstrip() == 'dense (Dense)                (None, 512)               401920'
    assert lines[6].rstrip() == ('batch_normalization (BatchNo (None, 512)               2048')
    assert lines[-4:-1] == ['Total params: 409,098', 'Trainable params: 408,074',
                            'Non-trainable params: 1,024']


def test_summary_adds_connected_to_exactly_where_keras_does():
    """Keras's rule: a chain (one node per depth, each fed by one tensor) gets the
    three-column table, even with a layer used twice; a branch gets "Connected to"."""
    minidl.clear_session()
    inputs = Input((10,))
    twice = Dense(10, name='twice')
    chain = Model(inputs, twice(twice(inputs)))
    hidden = Dense(8, name='hidden')(inputs)
    branched = Model(inputs, [Dense(1, name='o1')(hidden), Dense(3, name='o2')(hidden)])
    tables = {}
    for name, model in [('chain', chain), ('branched', branched)]:
        tables[name] = []
        model.summary(print_fn=tables[name].append)
    assert 'Connected to' not in tables['chain'][2]
    assert tables['branched'][2].split() == ['Layer', '(type)', 'Output', 'Shape', 'Param',
                                             '#', 'Connected', 'to']
    assert tables['branched'][8].split() == ['o1', '(Dense)', '(None,', '1)', '9',
                                             'hidden[0][0]']
    assert tables['branched'][10].split() == ['o2', '(Dense)', '(None,', '3)', '27',
                                              'hidden[0][0]']


def test_default_names_count_per_class():
    minidl.clear_session()
    names = [Dense(1).name, Dense(1).name, Conv2D(1, 1).name, Input((2,)).node.layer.name,
             Input((2,)).node.layer.name, Sequential().name, Model().name]
    assert names == ['dense', 'dense_1', 'conv2d', 'input_1', 'input_2', 'sequential', 'model']


def _two_tower_model():
    minidl.set_seed(0)
    left, right = Input((4,), name='left'), Input((6,), name='right')
    shared = Dense(5, activation='relu', name='shared')
    merged = Concatenate()([shared(Dense(4, name='project')(right)), shared(left)])
    category = Dense(3, activation='softmax', name='category')(merged)
    value = Dense(1, name='value')(add([shared(left), Dense(5)(merged)]))
    return Model([left, right], [category, value])


def test_functional_shared_layers_multiple_inputs_and_outputs():
    model = _two_tower_model()
    assert [layer.name for layer in model.layers[:2]] == ['left', 'right']
    shared = model.get_layer('shared')
    assert len([n for n in model._nodes if n.layer is shared]) == 3
    x = [np.ones((2, 4), 'float32'), np.ones((2, 6), 'float32')]
    category, value = model.predict(x)
    assert category.shape == (2, 3) and value.shape == (2, 1)
    by_name = model.predict({'left': x[0], 'right': x[1]})
    np.testing.assert_array_equal(by_name[0], category)
    # Weights are counted once even though 'shared' is called three times.
    assert model.count_params() == 4 * 5 + 5 + 6 * 4 + 4 + 10 * 3 + 3 + 10 * 5 + 5 + 5 * 1 + 1


def test_model_used_as_a_layer_shares_its_weights():
    inner = _two_tower_model()
    left, right = Input((4,)), Input((6,))
    category, value = inner([left, right])
    outer = Model([left, right], Dense(2)(Concatenate()([category, value])))
    x = [np.ones((3, 4), 'float32'), np.ones((3, 6), 'float32')]
    np.testing.assert_array_equal(outer.layers[2](x)[0].numpy(), inner.predict(x)[0])
    assert outer.count_params() == inner.count_params() + 4 * 2 + 2


def test_sequential_with_a_functional_model_first_is_built_at_once(tmp_path):
    """The transfer-learning recipe: Sequential([base, pooling, head]) builds like Keras."""
    from minidl.layers import GlobalAveragePooling2D
    from minidl.models import load_model
    inputs = Input((8, 8, 3))
    base = Model(inputs, Conv2D(4, 3, padding='same', use_bias=False)(inputs), name='base')
    base.trainable = False
    model = Sequential([base, GlobalAveragePooling2D(), Dense(10)])
    assert model.built and model.input_shape == (None, 8, 8, 3)
    assert model.output_shape == (None, 10)
    lines = []
    model.summary(print_fn=lines.append)
    # Conv2D 3*3*3*4 (frozen) + Dense 4*10+10, as Keras counts them.
    assert 'Trainable params: 50' in '\n'.join(lines)
    assert 'Non-trainable params: 108' in '\n'.join(lines)
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype('float32')
    features = base.predict(x).mean(axis=(1, 2))
    kernel, bias = model.layers[-1].get_weights()
    np.testing.assert_allclose(model.predict(x), features @ kernel + bias, rtol=1e-5, atol=1e-6)
    model.save(tmp_path / 'nested.h5')
    np.testing.assert_array_equal(load_model(tmp_path / 'nested.h5', compile=False).predict(x),
                                  model.predict(x))


def test_functional_config_round_trip_rebuilds_the_same_graph():
    model = _two_tower_model()
    config = json.loads(json.dumps(model.get_config()))
    copy = Model.from_config(config)
    copy.set_weights(model.get_weights())
    x = [np.linspace(0, 1, 8, dtype='float32').reshape(2, 4),
         np.linspace(-1, 1, 12, dtype='float32').reshape(2, 6)]
    for a, b in zip(model.predict(x), copy.predict(x)):
        np.testing.assert_array_equal(a, b)
    assert [layer.name for layer in copy.layers] == [layer.name for layer in model.layers]


def test_rnn_initial_state_from_another_layer_survives_the_config():
    encoder_in, decoder_in = Input((None, 3)), Input((None, 4))
    _, h, c = LSTM(6, return_state=True)(encoder_in)
    decoded = LSTM(6, return_sequences=True)(decoder_in, initial_state=[h, c])
    model = Model([encoder_in, decoder_in], Dense(2)(decoded))
    copy = Model.from_config(json.loads(json.dumps(model.get_config())))
    copy.set_weights(model.get_weights())
    x = [np.ones((2, 5, 3), 'float32'), np.ones((2, 7, 4), 'float32')]
    np.testing.assert_array_equal(model.predict(x), copy.predict(x))


def test_sequential_add_pop_and_deferred_build():
    model = Sequential()
    model.add(Dense(4))
    model.add(Dense(2))
    assert not model.built
    with pytest.raises(ValueError, match='not yet been built'):
        model.summary()
    out = model.predict(np.ones((3, 7), 'float32'))
    assert out.shape == (3, 2) and model.built
    assert model.count_params() == 7 * 4 + 4 + 4 * 2 + 2
    model.pop()
    assert model.output_shape == (None, 4)
    model.add(Dense(1))
    assert model.predict(np.ones((1, 7), 'float32')).shape == (1, 1)
    assert Sequential.from_config(model.get_config()).count_params() == model.count_params()


def test_sequential_starting_with_input_and_build():
    model = Sequential([Input((3,)), Dense(2)])
    assert model.output_shape == (None, 2) and len(model.layers) == 1
    other = Sequential([Dense(2)])
    other.build((None, 3))
    assert other.count_params() == 8


def test_graph_errors_name_the_problem():
    a, b = Input((3,)), Input((3,))
    with pytest.raises(ValueError, match='disconnected'):
        Model(a, Dense(1)(add([a, b])))
    with pytest.raises(ValueError, match='unique'):
        Model(a, Dense(1, name='twin')(Dense(1, name='twin')(a)))
    model = Model(a, Dense(1)(a))
    with pytest.raises(ValueError, match='expected shape'):
        model.predict(np.ones((2, 4), 'float32'))
    with pytest.raises(ValueError, match="no layer named 'missing'"):
        model.get_layer('missing')


def test_trainable_flag_freezes_weights_in_fit():
    minidl.set_seed(0)
    model = Sequential([Dense(4, input_shape=(3,)), Dense(1)])
    model.layers[0].trainable = False
    model.compile('sgd', 'mse')
    frozen = model.layers[0].get_weights()
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2
    model.fit(np.ones((8, 3), 'float32'), np.ones((8, 1), 'float32'), epochs=2, verbose=0)
    for a, b in zip(frozen, model.layers[0].get_weights()):
        np.testing.assert_array_equal(a, b)


def test_regularization_penalty_is_part_of_the_loss():
    minidl.set_seed(0)
    model = Sequential([Dense(2, input_shape=(3,), kernel_regularizer='l2', use_bias=False)])
    model.compile('sgd', 'mse')
    x, y = np.ones((4, 3), 'float32'), np.zeros((4, 2), 'float32')
    kernel = model.get_weights()[0]
    expected = ((x @ kernel) ** 2).mean() + 0.01 * (kernel ** 2).sum()
    assert model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-6)
