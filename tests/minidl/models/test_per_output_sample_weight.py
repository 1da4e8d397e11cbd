"""Per-output ``sample_weight``: a list, or a dict by output name (Keras 2's
``standardize_sample_weights``), against the same losses computed by hand.

Each output's loss is the mean over the batch of its weighted per-sample
losses, ``sum(w_i * l_i) / n`` (Keras 2.3's rule, which minidl follows for
every sample weight), and the model's loss their sum.
"""

import numpy as np
import pytest

import minidl
from minidl.layers import Dense, Input
from minidl.models import Model

EPSILON = 1e-7  # Keras's clipping of probabilities


def build():
    minidl.set_seed(3)
    inputs = Input((5,))
    hidden = Dense(4, activation='tanh')(inputs)
    model = Model(inputs, [Dense(1, activation='sigmoid', name='generation')(hidden),
                           Dense(3, activation='softmax', name='auxiliary')(hidden)])
    model.compile('sgd', ['binary_crossentropy', 'sparse_categorical_crossentropy'])
    return model


def batch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 5)).astype('float32')
    real = np.concatenate([np.full(4, 0.95), np.zeros(4)])
    classes = rng.integers(0, 3, 8)
    # mnist_acgan's weights: the auxiliary loss counts the real half only, twice.
    weights = [np.ones(8), np.concatenate([np.full(4, 2.0), np.zeros(4)])]
    return x, [real, classes], weights


def by_hand(model, x, y, weights):
    """[loss, generation_loss, auxiliary_loss] in float64 from the model's predictions."""
    generation, auxiliary = (p.astype(np.float64) for p in model.predict(x))
    p = np.clip(generation[:, 0], EPSILON, 1 - EPSILON)
    binary = -(y[0] * np.log(p) + (1 - y[0]) * np.log(1 - p))
    sparse = -np.log(np.clip(auxiliary[np.arange(len(x)), y[1]], EPSILON, 1))
    losses = [float(np.mean(loss * (1.0 if w is None else w)))
              for loss, w in zip((binary, sparse), weights)]
    return [sum(losses)] + losses


def test_a_list_weighs_each_output_with_its_own_array():
    model = build()
    x, y, weights = batch()
    expected = by_hand(model, x, y, weights)
    assert model.metrics_names == ['loss', 'generation_loss', 'auxiliary_loss']
    np.testing.assert_allclose(model.test_on_batch(x, y, sample_weight=weights), expected,
                               rtol=1e-5)
    # train_on_batch reports the losses of the batch before its update.
    np.testing.assert_allclose(model.train_on_batch(x, y, sample_weight=weights), expected,
                               rtol=1e-5)


def test_a_dict_by_output_name_and_none_entries_weigh_the_rest_alike():
    model = build()
    x, y, weights = batch()
    expected = by_hand(model, x, y, [None, weights[1]])
    for given in ({'auxiliary': weights[1]}, {'generation': None, 'auxiliary': weights[1]},
                  [None, weights[1]], (None, list(weights[1]))):
        np.testing.assert_allclose(model.test_on_batch(x, y, sample_weight=given), expected,
                                   rtol=1e-5)


def test_evaluate_and_fit_take_them_too():
    model = build()
    x, y, weights = batch()
    expected = by_hand(model, x, y, weights)
    # Batches of 3, 3 and 2 samples: the exact mean over all 8 samples all the same.
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=3, verbose=0,
                                              sample_weight=weights), expected, rtol=1e-5)
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False,
                        sample_weight={'generation': weights[0], 'auxiliary': weights[1]})
    np.testing.assert_allclose(history.history['auxiliary_loss'], [expected[2]], rtol=1e-5)


def test_one_array_still_weighs_every_output():
    model = build()
    x, y, weights = batch()
    expected = by_hand(model, x, y, [weights[1], weights[1]])
    np.testing.assert_allclose(model.test_on_batch(x, y, sample_weight=weights[1]), expected,
                               rtol=1e-5)


def test_a_one_output_model_takes_a_one_entry_list_or_its_name():
    minidl.set_seed(4)
    inputs = Input((5,))
    model = Model(inputs, Dense(1, name='only')(inputs))
    model.compile('sgd', 'mse')
    x, _, weights = batch()
    target = np.arange(8, dtype='float32')
    expected = np.mean((model.predict(x)[:, 0] - target) ** 2 * weights[1])
    for given in ([weights[1]], {'only': weights[1]}, weights[1], list(weights[1])):
        assert model.test_on_batch(x, target, sample_weight=given) == pytest.approx(expected,
                                                                                    rel=1e-5)


def test_wrong_lists_and_names_are_refused_before_any_step():
    model = build()
    x, y, weights = batch()
    before = model.get_weights()
    with pytest.raises(ValueError, match='a list of 1 arrays, but the model has 2 output'):
        model.train_on_batch(x, y, sample_weight=[weights[0]])
    with pytest.raises(ValueError, match=r"sample_weight names \['aux'\]"):
        model.train_on_batch(x, y, sample_weight={'aux': weights[1]})
    with pytest.raises(ValueError, match=r'sample_weight\[1\] must hold finite, non-negative'):
        model.train_on_batch(x, y, sample_weight=[weights[0], -weights[1]])
    with pytest.raises(ValueError, match=r"'sample_weight\[1\]': 7"):
        model.train_on_batch(x, y, sample_weight=[weights[0], weights[1][:7]])
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
