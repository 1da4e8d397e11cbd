"""Policies: names, the global policy, a layer's dtype argument and its config."""

import json

import numpy as np
import pytest

import minidl
from minidl import mixed_precision
from minidl.layers import BatchNormalization, Dense
from minidl.mixed_precision import Policy


def test_a_policy_names_its_compute_and_variable_dtypes():
    mixed = Policy('mixed_float16')
    assert (mixed.compute_dtype, mixed.variable_dtype, mixed.is_mixed) == \
        ('float16', 'float32', True)
    for name in ('float32', 'float16', 'float64'):
        plain = Policy(name)
        assert (plain.compute_dtype, plain.variable_dtype, plain.is_mixed) == (name, name, False)
    assert Policy(mixed) == mixed and repr(mixed) == '<Policy "mixed_float16">'
    assert Policy.from_config(mixed.get_config()) == mixed


def test_bfloat16_is_refused_with_the_reason():
    with pytest.raises(ValueError, match='numpy has no bfloat16'):
        Policy('mixed_bfloat16')


@pytest.mark.parametrize('name', ['mixed_float32', 'float', 'fp16', 'mixed'])
def test_unknown_names_are_refused(name):
    with pytest.raises(ValueError, match='Policy name'):
        Policy(name)


def test_the_global_policy_sets_layers_made_afterwards():
    assert mixed_precision.global_policy() == Policy('float32')
    before = Dense(2)
    mixed_precision.set_global_policy('mixed_float16')
    after, explicit = Dense(2), Dense(2, dtype='float32')
    assert before.dtype_policy == Policy('float32')
    assert after.dtype_policy == Policy('mixed_float16')
    assert (after.dtype, after.compute_dtype, after.variable_dtype) == \
        ('float32', 'float16', 'float32')
    assert explicit.dtype_policy == Policy('float32')
    mixed_precision.set_global_policy(None)
    assert Dense(2).dtype_policy == Policy('float32')


def test_the_global_policy_defaults_to_config_default_dtype(monkeypatch):
    monkeypatch.setattr(minidl.config, 'default_dtype', 'float64')
    assert mixed_precision.global_policy() == Policy('float64')


def test_an_integer_global_policy_is_refused():
    with pytest.raises(ValueError, match='floating'):
        mixed_precision.set_global_policy('int32')


def test_a_layer_takes_a_policy_its_name_or_its_config_dict():
    config = {'class_name': 'Policy', 'config': {'name': 'mixed_float16'}}
    for dtype in (Policy('mixed_float16'), 'mixed_float16', config):
        assert Dense(2, dtype=dtype).dtype_policy == Policy('mixed_float16')
    assert Dense(2, dtype=np.float64).dtype_policy == Policy('float64')
    with pytest.raises(ValueError, match="layer 'odd': dtype 'mixed_flaot16' is not a dtype"):
        Dense(2, dtype='mixed_flaot16', name='odd')
    with pytest.raises(ValueError, match='Policy'):
        Dense(2, dtype={'class_name': 'Other', 'config': {}})


def test_the_config_keeps_keras_2s_dtype_name_unless_mixed():
    # Keras 2 files hold a dtype name; tf.keras 2.4+ writes a mixed policy as a dict.
    assert Dense(2).get_config()['dtype'] == 'float32'
    mixed = Dense(2, dtype='mixed_float16').get_config()
    assert mixed['dtype'] == {'class_name': 'Policy', 'config': {'name': 'mixed_float16'}}
    again = Dense.from_config(json.loads(json.dumps(mixed)))
    assert again.dtype_policy == Policy('mixed_float16')


def test_weights_are_made_in_the_variable_dtype_and_flagged_for_casting():
    mixed_precision.set_global_policy('mixed_float16')
    dense, norm = Dense(3), BatchNormalization()
    dense(np.ones((2, 4), np.float32))
    norm(np.ones((2, 4), np.float32))
    assert all(w.dtype == np.float32 for w in dense.weights + norm.weights)
    assert all(getattr(w, 'autocast', False) for w in dense.weights)
    # Batch normalization computes in float32: its weights are read as they are.
    assert not any(getattr(w, 'autocast', False) for w in norm.weights)
