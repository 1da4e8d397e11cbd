"""Keras 2's private attributes of graph tensors and nodes, which scripts and third-party layers
read: the values Keras 2.2.4 gives for the same graphs (its engine tests' expectations)."""

import pytest

from minidl import layers
from minidl.layers import LSTM, Bidirectional, Dense, Dropout, Input
from minidl.models import Model


def test_keras_shape_history_and_nodes():
    a = Input(shape=(32,), name='input_a')
    b = Input(shape=(32,), name='input_b')
    assert a._keras_shape == (None, 32)
    a_layer, a_node_index, a_tensor_index = a._keras_history
    assert (a_node_index, a_tensor_index) == (0, 0) and len(a_layer._inbound_nodes) == 1
    node = a_layer._inbound_nodes[a_node_index]
    # An Input's node: its tensor in and out, no inbound layer.
    assert node.outbound_layer is a_layer and node.inbound_layers == []
    assert node.input_tensors == [a] and node.output_tensors == [a]
    assert node.input_shapes == [(None, 32)] and node.output_shapes == [(None, 32)]
    assert node.input_masks == [None] and node.output_masks == [None]

    dense = Dense(16, name='dense_1')
    a_2, b_2 = dense(a), dense(b)
    assert a_2._keras_history == (dense, 0, 0) and b_2._keras_history == (dense, 1, 0)
    assert dense._inbound_nodes[0].inbound_layers == [a_layer]
    assert dense._inbound_nodes[1].input_tensors == [b]
    assert dense._inbound_nodes[0].get_config() == {
        'outbound_layer': 'dense_1', 'inbound_layers': ['input_a'], 'node_indices': [0],
        'tensor_indices': [0]}
    merged = layers.concatenate([a_2, b_2], name='merge')
    merge_layer, _, _ = merged._keras_history
    assert len(merge_layer._inbound_nodes[0].input_tensors) == 2
    assert merge_layer._inbound_nodes[0].node_indices == [0, 1]


def test_initial_state_is_among_the_input_tensors():
    inputs, state_h, state_c = Input((3, 4)), Input((5,)), Input((5,))
    layer = LSTM(5)
    layer(inputs, initial_state=[state_h, state_c])
    assert state_h in layer._inbound_nodes[0].input_tensors


def test_uses_learning_phase():
    a, b = Input(shape=(32,)), Input(shape=(32,))
    a_2 = Dense(16)(a)
    b_2 = Dropout(0.5)(b)
    assert not a_2._uses_learning_phase and b_2._uses_learning_phase
    assert layers.concatenate([a_2, b_2])._uses_learning_phase  # it follows the inputs
    model = Model([a, b], [a_2, b_2])
    c_2, d_2 = model([Input(shape=(32,)), Input(shape=(32,))])
    assert c_2._uses_learning_phase and d_2._uses_learning_phase  # the model's, as Keras
    # Fixed by the call, or no rate: no dependence.
    assert not Dropout(0.5)(a, training=True)._uses_learning_phase
    assert not Dropout(0.0)(a)._uses_learning_phase
    sequence = Input((3, 4))
    assert not LSTM(2)(sequence)._uses_learning_phase
    assert LSTM(2, recurrent_dropout=0.1)(sequence)._uses_learning_phase
    assert layers.BatchNormalization()(a)._uses_learning_phase
    assert Bidirectional(LSTM(2, dropout=0.2))(sequence)._uses_learning_phase
    assert not Bidirectional(LSTM(2, dropout=0.2))(sequence, training=True)._uses_learning_phase
    # A layer may say so itself, as Keras 2's layers do.
    a_2._uses_learning_phase = True
    assert a_2._uses_learning_phase
    with pytest.raises(AttributeError, match='made by no layer'):
        layers.symbolic.SymbolicTensor((None, 2))._keras_history
