"""Bad input to fit, evaluate, predict and friends: refused whole, before any step.

Each test feeds one kind of bad input and checks the clear error it gets, and
that nothing was applied: the weights are bitwise those from before, and the
optimizer has counted no update.
"""

import json

import h5py
import numpy as np
import pytest

from minidl import layers
from minidl.layers import LSTM, Dense, Embedding, Flatten, Input, InputLayer
from minidl.layers.base import Layer
from minidl.models import Model, Sequential, load_model
from minidl.tensor import Tensor

CLASSES = 3


def _model(deferred=False):
    """A compiled softmax classifier of 4 features (built at once unless ``deferred``)."""
    shape = {} if deferred else {'input_shape': (4,)}
    model = Sequential([Dense(5, activation='relu', **shape),
                        Dense(CLASSES, activation='softmax')])
    model.compile('sgd', 'sparse_categorical_crossentropy')
    return model


def _data(count=12, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 4)).astype('float32')
    return x, np.arange(count) % CLASSES


class Unchanged:
    """Asserts on exit that the model's weights and optimizer did not change."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.weights = self.model.get_weights()
        self.iterations = self.model.optimizer.iterations if self.model.optimizer else None
        return self

    def __exit__(self, *exc_info):
        after = self.model.get_weights()
        assert len(after) == len(self.weights)
        for before, now in zip(self.weights, after):
            assert before.tobytes() == now.tobytes()
        if self.model.optimizer is not None:
            assert self.model.optimizer.iterations == self.iterations
        return False


def _refused(model, call, message, error=ValueError):
    """Run ``call`` and check it raises ``error`` matching ``message``, changing nothing."""
    if not model.built:
        with pytest.raises(error, match=message):
            call()
        return
    with Unchanged(model), pytest.raises(error, match=message):
        call()


# ----- sample_weight and class_weight ---------------------------------------


@pytest.mark.parametrize('bad, shown', [(np.nan, 'nan'), (np.inf, 'inf'), (-1.0, '-1.0')])
def test_a_bad_sample_weight_in_the_last_batch_is_refused_before_the_first_step(bad, shown):
    model = _model()
    x, y = _data()
    weight = np.ones(len(x), 'float32')
    weight[-1] = bad  # in the last batch of size 2: a check per batch would train first
    _refused(model, lambda: model.fit(x, y, sample_weight=weight, batch_size=2, verbose=0),
             rf'sample_weight must hold finite, non-negative numbers; sample_weight\[11\] '
             rf'is {shown}')
    _refused(model, lambda: model.train_on_batch(x, y, sample_weight=weight), 'sample_weight')
    _refused(model, lambda: model.evaluate(x, y, sample_weight=weight, verbose=0),
             'sample_weight')


@pytest.mark.parametrize('bad', [np.nan, -np.inf, -0.5])
def test_a_bad_class_weight_is_refused(bad):
    model = _model()
    x, y = _data()
    class_weight = {0: 1.0, 1: 2.0, 2: bad}
    message = r'class_weight must hold finite, non-negative numbers; class_weight\[2\]'
    _refused(model, lambda: model.fit(x, y, class_weight=class_weight, verbose=0), message)
    _refused(model, lambda: model.train_on_batch(x, y, class_weight=class_weight), message)

    def batches():
        while True:
            yield x[:4], y[:4]
    _refused(model, lambda: model.fit(batches(), steps_per_epoch=2, class_weight=class_weight,
                                      verbose=0), message)


def test_a_bad_sample_weight_from_a_generator_is_refused_before_its_step():
    model = _model()
    x, y = _data()
    weight = np.ones(4, 'float32')
    weight[2] = np.nan

    def batches():
        while True:
            yield x[:4], y[:4], weight
    _refused(model, lambda: model.fit(batches(), steps_per_epoch=2, verbose=0),
             r'sample_weight\[2\] is nan')


# ----- targets that do not fit the loss ---------------------------------------


@pytest.mark.parametrize('bad_label', [CLASSES, -1])
@pytest.mark.parametrize('deferred', [False, True])
def test_an_out_of_range_sparse_label_in_the_last_batch_is_refused_before_the_first_step(
        bad_label, deferred):
    model = _model(deferred=deferred)
    x, y = _data()
    y[-1] = bad_label
    low, high = min(0, bad_label), max(CLASSES - 1, bad_label)
    message = (rf"y\[0\] \(shape \(12,\)\) for output 'dense_\d+' of shape \(None, 3\): "
               rf'sparse_categorical_crossentropy labels must lie in \[0, 3\) for 3 classes, '
               rf'got values from {low} to {high}')
    if deferred:
        # The model is built from the data's shapes first, so its initial weights exist.
        with pytest.raises(ValueError, match=message):
            model.fit(x, y, batch_size=2, verbose=0)
        assert model.optimizer.iterations == 0
    _refused(model, lambda: model.fit(x, y, batch_size=2, verbose=0), message)
    _refused(model, lambda: model.train_on_batch(x, y), message)
    _refused(model, lambda: model.evaluate(x, y, verbose=0), message)


def test_sparse_labels_of_the_wrong_shape_are_refused():
    model = _model()
    x, _ = _data()
    one_hot = np.eye(CLASSES, dtype='float32')[np.arange(len(x)) % CLASSES]
    _refused(model, lambda: model.fit(x, one_hot, verbose=0),
             r'y\[0\] \(shape \(12, 3\)\).*one class index per sample, of shape \(.samples.,\); '
             r'for one-hot targets use categorical_crossentropy')


def test_one_hot_targets_of_the_wrong_shape_are_refused():
    model = _model()
    model.compile('sgd', 'categorical_crossentropy')
    x, y = _data()
    too_wide = np.eye(CLASSES + 1, dtype='float32')[y]
    _refused(model, lambda: model.fit(x, too_wide, batch_size=2, verbose=0),
             r"y\[0\] \(shape \(12, 4\)\) for output 'dense_\d+' of shape \(None, 3\): "
             r"categorical_crossentropy takes targets of the output's shape$")
    _refused(model, lambda: model.fit(x, y, verbose=0),
             r'y\[0\] \(shape \(12,\)\).*for class indices use sparse_categorical_crossentropy')


def test_the_targets_of_the_second_output_are_named():
    inputs = Input((4,))
    first = Dense(2, activation='softmax', name='first')(inputs)
    second = Dense(5, activation='softmax', name='second')(inputs)
    model = Model(inputs, [first, second])
    model.compile('sgd', ['sparse_categorical_crossentropy'] * 2)
    x, y = _data()
    _refused(model, lambda: model.fit(x, [y % 2, y + 4], verbose=0),
             r"y\[1\] \(shape \(12,\)\) for output 'second' of shape \(None, 5\): .* got "
             r'values from 4 to 6')


# ----- no samples ---------------------------------------------------------------


@pytest.mark.parametrize('method, call', [
    ('fit', lambda m, x, y: m.fit(x, y, verbose=0)),
    ('evaluate', lambda m, x, y: m.evaluate(x, y, verbose=0)),
    ('predict', lambda m, x, y: m.predict(x)),
    ('train_on_batch', lambda m, x, y: m.train_on_batch(x, y)),
    ('test_on_batch', lambda m, x, y: m.test_on_batch(x, y)),
    ('predict_on_batch', lambda m, x, y: m.predict_on_batch(x)),
])
def test_data_without_samples_is_an_error_naming_the_method(method, call):
    model = _model()
    x, y = np.zeros((0, 4), 'float32'), np.zeros(0, 'int64')
    _refused(model, lambda: call(model, x, y),
             rf'^{method}: the data has no samples \(x\[0\] has shape \(0, 4\)\)')


def test_empty_validation_data_is_refused_before_training():
    model = _model()
    x, y = _data()
    _refused(model, lambda: model.fit(x, y, validation_data=(x[:0], y[:0]), verbose=0),
             'no samples')


# ----- integer and boolean inputs ---------------------------------------------------


def test_integer_and_boolean_inputs_run_the_model_in_float32():
    model = Sequential([Dense(3, input_shape=(4,))])
    kernel, bias = model.get_weights()
    counts = np.arange(8).reshape(2, 4)
    for data in (counts, counts.astype('uint8'), counts > 3):
        predicted = model.predict(data)
        assert predicted.dtype == np.float32
        np.testing.assert_allclose(predicted, data.astype('float32') @ kernel + bias,
                                   rtol=1e-6)


def test_one_hot_booleans_train_a_recurrent_model_as_floats_do():
    def run(data):
        model = Sequential([LSTM(3, input_shape=(5, 4)), Dense(2, activation='softmax')])
        model.set_weights(weights)
        model.compile('sgd', 'sparse_categorical_crossentropy')
        model.fit(data, labels, batch_size=2, epochs=1, shuffle=False, verbose=0)
        return model.get_weights()
    weights = Sequential([LSTM(3, input_shape=(5, 4)), Dense(2)]).get_weights()
    tokens = np.random.default_rng(1).integers(0, 4, size=(6, 5))
    one_hot = np.eye(4, dtype=bool)[tokens]
    labels = tokens[:, 0] % 2
    for got, want in zip(run(one_hot), run(one_hot.astype('float32'))):
        assert got.tobytes() == want.tobytes()


class _DtypeSpy(Layer):
    """Records the dtype of what it is called on; passes a float version on."""

    def __init__(self, integer_inputs, **kwargs):
        super().__init__(**kwargs)
        self.integer_inputs, self.seen = integer_inputs, []

    def call(self, inputs):
        self.seen.append(inputs.dtype)
        return Tensor(inputs.data.astype('float32'))

    def compute_output_shape(self, input_shape):
        return input_shape


@pytest.mark.parametrize('input_dtype, integer_inputs, data_dtype, seen', [
    (None, False, 'int64', 'float32'),    # Keras's rule: data takes the Input's dtype
    (None, True, 'int64', 'int64'),       # indices: float32 could not hold them all exactly
    (None, True, 'bool', 'float32'),      # booleans are never indices
    ('int32', False, 'int64', 'int64'),   # an integer Input keeps integers
    ('float64', False, 'int32', 'float64'),
])
def test_integer_data_takes_the_input_dtype_unless_read_as_indices(
        input_dtype, integer_inputs, data_dtype, seen):
    spy = _DtypeSpy(integer_inputs)
    inputs = Input((3,), dtype=input_dtype)
    model = Model(inputs, spy(inputs))
    model.predict(np.ones((2, 3), data_dtype))
    assert spy.seen == [np.dtype(seen)]


def test_embeddings_read_integer_indices_beyond_float32_precision():
    # 2**24 + 1 is not a float32: a cast would make it 2**24 and pick the wrong row.
    index = 2 ** 24 + 1
    model = Sequential([Embedding(index + 1, 1, input_length=1), Flatten()])
    table = np.arange(index + 1, dtype='float32').reshape(-1, 1)
    table[index] = -1.0
    model.set_weights([table])
    np.testing.assert_array_equal(model.predict(np.array([[index]])), [[-1.0]])


# ----- arguments of the wrong kind ----------------------------------------------------


@pytest.mark.parametrize('bad, message', [
    ({'batch_size': True}, 'batch_size must be a positive integer, got True'),
    ({'batch_size': 2.0}, 'batch_size must be a positive integer, got 2.0'),
    ({'epochs': -1}, 'epochs must be an integer >= 0, got -1'),
    ({'initial_epoch': -1}, 'initial_epoch must be an integer >= 0, got -1'),
    ({'epochs': True}, 'epochs must be an integer >= 0, got True'),
    ({'steps_per_epoch': 0}, 'steps_per_epoch must be a positive integer, got 0'),
    ({'validation_freq': 0}, 'validation_freq must be a positive integer, got 0'),
    ({'validation_split': 0.5, 'validation_batch_size': True},
     'batch_size must be a positive integer, got True'),
])
def test_bad_counts_are_refused(bad, message):
    model = _model()
    x, y = _data()
    _refused(model, lambda: model.fit(x, y, verbose=0, **bad), message)


@pytest.mark.parametrize('scalar', [np.float64(3.0), np.int32(7), 3.0, np.array(2.0)])
def test_a_scalar_as_x_is_called_a_scalar(scalar):
    model = _model()
    for call in (lambda: model.fit(scalar, verbose=0), lambda: model.predict(scalar),
                 lambda: model.evaluate(scalar, verbose=0),
                 lambda: model.train_on_batch(scalar, 0)):
        with Unchanged(model), pytest.raises(ValueError, match='got the scalar|is a scalar'):
            call()


@pytest.mark.parametrize('dtype', ['int32', 'bool', 'complex64'])
def test_a_layer_with_weights_refuses_a_dtype_that_is_not_floating(dtype):
    for make in (lambda: Dense(2, dtype=dtype, name='wide'),
                 lambda: LSTM(2, dtype=dtype, name='wide')):
        with pytest.raises(ValueError, match=rf"layer 'wide': dtype '{dtype}' is not floating"):
            make()
    # Layers without weights, and inputs, may hold any type.
    assert Flatten(dtype=dtype).dtype == dtype
    assert InputLayer(input_shape=(2,), dtype=dtype).dtype == dtype


def test_a_dtype_that_is_no_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match="layer 'odd': dtype 'flaot32' is not a dtype"):
        Dense(2, dtype='flaot32', name='odd')


def test_complex_weights_are_refused_and_nothing_is_set():
    model = _model()
    model.compile('sgd', 'mse')
    weights = model.get_weights()
    complex_weights = weights[:-1] + [weights[-1] + 1j]  # only the last one: nothing is set
    _refused(model, lambda: model.set_weights(complex_weights),
             r"layer '.*': weight .*bias:0 takes real numbers, the array given has dtype "
             r'complex')
    _refused(model, lambda: model.layers[0].set_weights(
        [weights[0], weights[1].astype('complex64')]), 'takes real numbers')


def test_a_file_whose_top_level_class_is_a_layer_is_refused(tmp_path):
    model = _model()
    path = tmp_path / 'model.h5'
    model.save(path)
    with h5py.File(path, 'r+') as file:
        dense = {'class_name': 'Dense', 'config': layers.Dense(2).get_config()}
        file.attrs['model_config'] = json.dumps(dense)
    contents = path.read_bytes()
    with pytest.raises(ValueError, match="'model_config' describes a Dense layer, not a model"):
        load_model(path)
    assert path.read_bytes() == contents


def test_a_bad_compile_leaves_the_model_compiled_as_it_was():
    model = Sequential([Dense(2, input_shape=(3,))])
    model.compile('adam', 'mse')
    optimizer, objectives = model.optimizer, model.objectives
    with pytest.raises(ValueError, match="unknown loss 'nope'"):
        model.compile('sgd', loss='nope')
    assert model.optimizer is optimizer and model.objectives is objectives
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    assert model.optimizer.iterations == 1
