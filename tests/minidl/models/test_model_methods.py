"""Keras 2's smaller model methods and attributes: predict_classes, predict_proba,
get_layer, uses_learning_phase, and outputs compiled without a loss."""

import numpy as np
import pytest

import minidl
from minidl.layers import Dense, Dropout, Input
from minidl.models import Model, Sequential

X = np.random.default_rng(0).standard_normal((7, 4)).astype('float32')


def test_predict_classes_is_the_argmax_or_the_half_threshold():
    minidl.set_seed(0)
    several = Sequential([Dense(3, activation='softmax', input_shape=(4,))])
    np.testing.assert_array_equal(several.predict_classes(X, batch_size=3),
                                  np.argmax(several.predict(X), axis=-1))
    one = Sequential([Dense(1, activation='sigmoid', input_shape=(4,))])
    classes = one.predict_classes(X)
    assert classes.dtype == np.int32 and classes.shape == (7, 1)
    np.testing.assert_array_equal(classes, (one.predict(X) > 0.5).astype(np.int32))
    np.testing.assert_array_equal(one.predict_proba(X), one.predict(X))
    with pytest.warns(UserWarning, match=r'outside \[0, 1\]'):
        Sequential([Dense(2, input_shape=(4,))]).predict_proba(100 * X)


def test_get_layer_by_name_or_index_as_keras():
    minidl.set_seed(0)
    model = Sequential([Dense(3, input_shape=(4,), name='a'), Dropout(0.1, name='b'),
                        Dense(2, name='c')])
    assert model.get_layer('b') is model.layers[1]
    assert model.get_layer(index=0).name == 'a'  # the input layer is not counted
    assert model.get_layer('a', index=2).name == 'c'  # index wins
    with pytest.raises(ValueError, match='name or an index'):
        model.get_layer()
    with pytest.raises(ValueError, match="no layer named 'd'"):
        model.get_layer('d')
    assert model.uses_learning_phase
    assert not Sequential([Dense(3, input_shape=(4,))]).uses_learning_phase


def test_an_output_without_a_loss_takes_no_targets_and_reports_nothing():
    minidl.set_seed(0)
    inputs = Input((4,))
    hidden = Dense(3, name='hidden')(inputs)
    model = Model(inputs, [Dense(2, name='scores')(hidden), hidden])
    y = np.ones((7, 2), dtype='float32')
    with pytest.warns(UserWarning, match=r"no entry for output\(s\) \['hidden'\]"):
        model.compile('sgd', loss={'scores': 'mse'}, metrics=['mae'])
    assert model.metrics_names == ['loss', 'scores_loss', 'scores_mae']
    loss, scores_loss, mae = model.evaluate(X, y, verbose=0)
    scores = model.predict(X)[0]
    assert loss == scores_loss == pytest.approx(float(np.mean((scores - y) ** 2)), rel=1e-6)
    assert mae == pytest.approx(float(np.mean(np.abs(scores - y))), rel=1e-6)
    model.compile('sgd', loss=['mse', None])
    assert model.evaluate(X, [y], verbose=0)[0] == pytest.approx(loss, rel=1e-6)
    with pytest.raises(ValueError, match='expects 1 y array'):
        model.evaluate(X, [y, y], verbose=0)


def test_a_new_head_on_a_models_input_and_output_as_keras_2_scripts_add_one():
    inputs = Input((3,))
    base = Model(inputs, Dense(2, name='body')(inputs))
    assert base.input is inputs and base.output is base.outputs[0]
    head = Model(base.input, Dense(4, name='head')(base.output))
    assert head.count_params() == (3 * 2 + 2) + (2 * 4 + 4)
    sequential = Sequential([Dense(5, input_shape=(3,))])
    assert sequential.output.shape == (None, 5) and sequential.input.shape == (None, 3)
    two = Model(inputs, [base.output, head.output])
    assert two.output == two.outputs
