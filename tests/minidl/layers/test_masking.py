"""Masks travel through graphs as in Keras 2: made, passed on, combined, consumed, weighed."""

import io
import contextlib

import numpy as np
import pytest

from minidl import layers
from minidl.layers import (
    Concatenate, Dense, Embedding, Flatten, GlobalAveragePooling1D, Input, Lambda, Masking,
    TimeDistributed)
from minidl.models import Model, Sequential, clone_model, load_model

INDICES = np.array([[3, 1, 0, 0], [0, 2, 5, 4], [7, 0, 6, 0]])


def _values(model, x):
    """The model's output and the mask riding on it (what the loss sees)."""
    output = model(x)
    return output.numpy(), output._keras_mask.numpy()


def test_embedding_mask_zero_marks_the_zero_indices():
    words = Input((4,), dtype='int32')
    vectors = Embedding(8, 3, mask_zero=True)(words)
    assert vectors._keras_mask.shape == (None, 4) and vectors._keras_mask.dtype == bool
    _, mask = _values(Model(words, vectors), INDICES)
    np.testing.assert_array_equal(mask, INDICES != 0)


def test_masking_zeroes_and_masks_the_padding_steps():
    x = np.array([[[1., 2.], [-1., -1.], [0., 3.]], [[-1., -1.], [4., -1.], [5., 6.]]], 'float32')
    inputs = Input((3, 2))
    model = Model(inputs, Masking(mask_value=-1.0)(inputs))
    output, mask = _values(model, x)
    padding = np.all(x == -1, axis=-1)
    np.testing.assert_array_equal(mask, ~padding)
    np.testing.assert_array_equal(output, np.where(padding[..., None], 0, x))


def test_layers_that_support_masking_pass_it_on_and_others_refuse_it():
    words = Input((4,), dtype='int32')
    vectors = Embedding(8, 3, mask_zero=True)(words)
    assert Dense(2)(vectors)._keras_mask is vectors._keras_mask
    assert TimeDistributed(Dense(2))(vectors)._keras_mask is vectors._keras_mask
    assert layers.Dropout(0.5)(vectors)._keras_mask is vectors._keras_mask
    # Keras 2: a layer that does not know what padding means refuses a mask ...
    with pytest.raises(TypeError, match='does not support masking'):
        Flatten()(vectors)
    # ... while a Lambda without a mask argument stops it, and one with it sets it.
    assert Lambda(lambda t: t * 2)(vectors)._keras_mask is None
    assert Lambda(lambda t: t, mask=lambda x, m: m)(vectors)._keras_mask is vectors._keras_mask


def test_merge_and_concatenate_combine_masks_as_keras_2():
    a, b = Input((4,), dtype='int32'), Input((4,), dtype='int32')
    ea = Embedding(8, 3, mask_zero=True)(a)
    eb = Embedding(8, 3, mask_zero=True)(b)
    plain = Dense(3)(Input((4, 3)))
    second = INDICES[::-1].copy()
    added = Model([a, b], layers.add([ea, eb]))
    np.testing.assert_array_equal(_values(added, [INDICES, second])[1],
                                  (INDICES != 0) & (second != 0))
    features = Model([a, b], Concatenate()([ea, eb]))
    np.testing.assert_array_equal(_values(features, [INDICES, second])[1],
                                  (INDICES != 0) & (second != 0))
    in_time = Model([a, b], Concatenate(axis=1)([ea, eb]))
    np.testing.assert_array_equal(_values(in_time, [INDICES, second])[1],
                                  np.concatenate([INDICES != 0, second != 0], axis=1))
    # An input without a mask counts as unmasked everywhere.
    assert Concatenate()([ea, plain])._keras_mask is not None


def test_global_average_pooling_averages_the_unmasked_steps():
    words = Input((4,), dtype='int32')
    embedding = Embedding(8, 3, mask_zero=True)
    pooled = GlobalAveragePooling1D()(embedding(words))
    assert pooled._keras_mask is None
    model = Model(words, pooled)
    table = embedding.get_weights()[0]
    mask = (INDICES != 0)[..., None]
    expected = (table[INDICES] * mask).sum(axis=1) / mask.sum(axis=1)
    np.testing.assert_allclose(model.predict(INDICES), expected, rtol=1e-6)


def _tagger():
    words = Input((4,), dtype='int32')
    vectors = Embedding(8, 3, mask_zero=True, name='vectors')(words)
    tags = TimeDistributed(Dense(2, activation='softmax'), name='tags')(vectors)
    model = Model(words, tags)
    model.compile('sgd', 'categorical_crossentropy', metrics=['accuracy'])
    return model


def test_the_loss_and_metrics_of_a_masked_output_count_the_unmasked_steps_only():
    model = _tagger()
    targets = np.eye(2, dtype='float32')[(INDICES % 2)]
    loss, accuracy = model.evaluate(INDICES, targets, batch_size=3, verbose=0)
    probabilities = model.predict(INDICES)
    mask = INDICES != 0
    per_step = -np.sum(targets * np.log(probabilities), axis=-1)
    # Keras 2: sum(loss * mask) / sum(mask) over the batch.
    np.testing.assert_allclose(loss, (per_step * mask).sum() / mask.sum(), rtol=1e-5)
    correct = probabilities.argmax(-1) == targets.argmax(-1)
    np.testing.assert_allclose(accuracy, correct[mask].mean(), rtol=1e-6)


def test_padding_steps_do_not_change_the_gradient():
    model = _tagger()
    targets = np.eye(2, dtype='float32')[(INDICES % 2)]
    other = targets.copy()
    other[INDICES == 0] = 1 - other[INDICES == 0]  # targets of padding steps only
    before = model.get_weights()
    model.train_on_batch(INDICES, targets)
    once = model.get_weights()
    model.set_weights(before)
    model.train_on_batch(INDICES, other)
    for a, b in zip(once, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_masked_model_saves_loads_clones_and_summarises_without_its_mask_operations(
        tmp_path):
    model = _tagger()
    assert [layer.name for layer in model.layers] == [model.layers[0].name, 'vectors', 'tags']
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        model.summary()
    assert 'nonzero_mask' not in text.getvalue()
    model.save(tmp_path / 'tagger.h5')
    loaded = load_model(tmp_path / 'tagger.h5')
    np.testing.assert_array_equal(_values(loaded, INDICES)[1], INDICES != 0)
    np.testing.assert_array_equal(loaded.predict(INDICES), model.predict(INDICES))
    clone = clone_model(model)
    np.testing.assert_array_equal(_values(clone, INDICES)[1], INDICES != 0)


def test_sequential_models_carry_masks_too():
    model = Sequential([Embedding(8, 3, mask_zero=True, input_length=4), Dense(2)])
    np.testing.assert_array_equal(_values(model, INDICES)[1], INDICES != 0)
