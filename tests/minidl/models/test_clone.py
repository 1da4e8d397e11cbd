"""clone_model: new layers with the same configs, fresh weights, shared layers still shared."""

import numpy as np
import pytest

import minidl
from minidl.layers import Concatenate, Dense, Input, Lambda
from minidl.layers.nest import flatten
from minidl.models import Model, Sequential, clone_model

X = np.random.default_rng(0).standard_normal((6, 4)).astype('float32')


def _assert_same_predictions(first, second, data):
    for ours, theirs in zip(flatten(first.predict(data)), flatten(second.predict(data))):
        np.testing.assert_array_equal(ours, theirs)


def _assert_new_layers(model, clone):
    originals = {id(layer) for layer in model.layers}
    assert not any(id(layer) in originals for layer in clone.layers)
    assert not any(np.array_equal(a, b) for a, b in zip(model.get_weights(), clone.get_weights())
                   if a.ndim == 2)  # kernels are drawn anew (biases start at zero in both)


def test_a_sequential_clone_has_new_weights_and_the_same_function():
    minidl.set_seed(0)
    model = Sequential([Dense(5, activation='relu', input_shape=(4,)),
                        Lambda(lambda t: 2 * t), Dense(3, activation='softmax')])
    clone = clone_model(model)
    assert isinstance(clone, Sequential) and clone.name == model.name
    assert isinstance(clone.layers[1], Lambda) and clone.layers[1] is not model.layers[1]
    assert [layer.get_config() for layer in clone.layers if not isinstance(layer, Lambda)] == \
        [layer.get_config() for layer in model.layers if not isinstance(layer, Lambda)]
    _assert_new_layers(model, clone)
    clone.set_weights(model.get_weights())
    _assert_same_predictions(model, clone, X)


def test_a_functional_clone_keeps_a_shared_layer_shared():
    minidl.set_seed(0)
    left, right = Input((4,), name='left'), Input((4,), name='right')
    shared = Dense(3, name='shared')
    output = Dense(2, name='out')(Concatenate()([shared(left), shared(right)]))
    model = Model([left, right], output)
    clone = clone_model(model)
    assert clone.get_config() == model.get_config()
    _assert_new_layers(model, clone)
    assert len(clone.get_layer('shared')._inbound_nodes) == 2
    assert len(clone.weights) == len(model.weights) == 4
    clone.set_weights(model.get_weights())
    _assert_same_predictions(model, clone, [X, -X])


def test_inner_models_are_cloned_and_input_tensors_are_used():
    minidl.set_seed(0)
    inner = Sequential([Dense(3, activation='tanh', input_shape=(4,))], name='inner')
    inputs = Input((4,))
    model = Model(inputs, Dense(1)(inner(inputs)))
    new_input = Input((4,), name='new_input')
    clone = clone_model(model, input_tensors=new_input)
    assert clone.inputs == [new_input]
    assert clone.get_layer('inner') is not inner
    _assert_new_layers(model, clone)
    clone.set_weights(model.get_weights())
    _assert_same_predictions(model, clone, X)


def test_wrong_input_tensors_and_subclassed_models_are_refused():
    minidl.set_seed(0)
    inputs = Input((4,))
    model = Model(inputs, Dense(2)(inputs))
    with pytest.raises(ValueError, match='has 1 input'):
        clone_model(model, input_tensors=[Input((4,)), Input((4,))])
    with pytest.raises(ValueError, match='must come from Input'):
        clone_model(model, input_tensors=Dense(4)(Input((4,))))

    class Subclassed(Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    with pytest.raises(ValueError, match='subclassed'):
        clone_model(Subclassed())
