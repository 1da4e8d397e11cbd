"""The data intake's plain functions, called with names and arrays and no model."""

import numpy as np
import pytest

import minidl
from minidl.models import intake
from minidl.utils import Sequence


class _Two(Sequence):
    def __len__(self):
        return 2

    def __getitem__(self, index):
        return np.full((1, 2), float(index)), np.zeros((1, 1))


def _arrays(x, y=None, sample_weight=None, class_weight=None, target_names=None,
            temporal=False, target_temporal=None):
    return intake.standardize_arrays(
        'fit', x, y, sample_weight, class_weight, model_name='m', input_names=['a', 'b'],
        target_names=target_names, temporal=temporal, target_temporal=target_temporal)


def test_kind_of_tells_each_kind_once():
    assert intake.kind_of(np.zeros(3)) == intake.ARRAYS
    assert intake.kind_of([np.zeros(3)]) == intake.ARRAYS
    assert intake.kind_of({'a': np.zeros(3)}) == intake.ARRAYS
    assert intake.kind_of(_Two()) == intake.SEQUENCE
    assert intake.kind_of(iter([])) == intake.GENERATOR
    assert intake.kind_of(x for x in []) == intake.GENERATOR
    assert intake.kind_of('abc') == intake.SCALAR  # iterable, but never data
    assert intake.kind_of(3) == intake.SCALAR
    assert intake.kind_of(None) == intake.OTHER
    assert intake.kind_of(object()) == intake.OTHER


def test_inputs_by_name_come_in_the_models_order():
    a, b = np.zeros((4, 2)), np.ones((4, 3))
    xs, ys, weight = _arrays({'b': b, 'a': a})
    assert xs[0] is a and xs[1] is b and ys is None and weight is None
    with pytest.raises(ValueError, match=r"model 'm' expects 2 x array\(s\) \(a, b\), got 1"):
        _arrays([a])
    # As in Keras 2.2.4, keys the model has no input for are left out; a missing one is named.
    xs, _, _ = _arrays({'a': a, 'b': b, 'c': 'not an array'})
    assert len(xs) == 2 and xs[0] is a and xs[1] is b
    with pytest.raises(ValueError, match=r"no data given for \['b'\] in x"):
        _arrays({'a': a, 'c': b})


def test_generator_batches_by_name_as_keras_image_ocr_gives_them():
    # Keras 2.2.4's image_ocr yields ({input name: array, ..., 'source_str': [...]},
    # {'ctc': array}) from its generator.
    a, b = (minidl.layers.Input((2,), name=name) for name in 'ab')
    out = minidl.layers.Dense(1, name='out')(minidl.layers.concatenate([a, b]))
    model = minidl.models.Model([a, b], out)
    model.compile('sgd', 'mse')
    rng = np.random.default_rng(0)
    x = {'b': rng.standard_normal((8, 2)), 'a': rng.standard_normal((8, 2)),
         'source_str': ['word'] * 8}
    y = {'out': rng.standard_normal((8, 1))}
    by_name = model.evaluate((item for item in [(x, y)] * 2), steps=2, verbose=0)
    in_order = model.evaluate([x['a'], x['b']], y['out'], verbose=0)
    assert by_name == pytest.approx(in_order, rel=1e-6)
    np.testing.assert_array_equal(model.predict(iter([x]), steps=1),
                                  model.predict([x['a'], x['b']]))
    history = model.fit((item for item in [(x, y)] * 3), steps_per_epoch=3, verbose=0)
    assert len(history.history['loss']) == 1
    with pytest.raises(ValueError, match=r"no data given for \['out'\] in y"):
        model.fit(iter([(x, {'ctc': y['out']})]), steps_per_epoch=1, verbose=0)


def test_class_weight_times_sample_weight_by_hand():
    x = [np.zeros((3, 1)), np.zeros((3, 1))]
    y = np.array([[0, 1], [1, 0], [0, 1]], dtype='float32')  # classes 1, 0, 1
    _, _, weight = _arrays(x, y, sample_weight=np.array([1.0, 2.0, 3.0]),
                           class_weight={0: 0.5, 1: 4.0}, target_names=['out'],
                           target_temporal=[False])
    np.testing.assert_array_equal(weight, [4.0, 1.0, 12.0])


def test_lengths_are_named_in_the_error():
    with pytest.raises(ValueError, match=r"\{'x\[0\]': 4, 'x\[1\]': 3\}"):
        _arrays([np.zeros((4, 1)), np.zeros((3, 1))])


def test_input_shapes_none_matches_any_size():
    intake.check_input_shapes([np.zeros((2, 5, 3))], [(None, None, 3)], ['a'])
    with pytest.raises(ValueError, match=r"expected shape \(None, None, 4\), found \(2, 5, 3\)"):
        intake.check_input_shapes([np.zeros((2, 5, 3))], [(None, None, 4)], ['a'])
    assert intake.shape_fits((5, 3), (None, 3)) and not intake.shape_fits((5,), (None, 3))


def test_a_sequence_with_class_weight_gets_them_per_batch():
    feed = intake.batch_feed('fit', intake.SEQUENCE, _Two(), None, None, {0: 3.0}, None,
                             False, None)
    weights = [batch.sample_weight.tolist() for batch in feed.epoch()]
    assert weights == [[3.0], [3.0]]


def test_fit_refuses_data_of_no_known_kind_with_a_type_error():
    model = minidl.Sequential([minidl.layers.Dense(1, input_shape=(2,))])
    model.compile('sgd', 'mse')
    with pytest.raises(TypeError, match='got a object'):
        model.fit(object())
    with pytest.raises(ValueError, match=r'x is None'):
        model.fit(None)
