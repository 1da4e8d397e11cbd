"""Bad input found before the first step, not after an epoch of training: validation data
of the wrong size, a checkpoint path naming validation values without validation data,
and sparse labels that are not whole class indices. Each error leaves the weights, the
optimizer and the disk as they were."""

import numpy as np
import pytest

import minidl
from minidl.callbacks import Callback, ModelCheckpoint
from minidl.layers import Dense
from minidl.models import Sequential


class StepCounter(Callback):
    def __init__(self):
        super().__init__()
        self.batches = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.batches += 1


def compiled_mlp():
    minidl.set_seed(0)
    model = Sequential([Dense(7, activation='tanh', input_shape=(5,)),
                        Dense(3, activation='softmax')])
    model.compile('adam', 'sparse_categorical_crossentropy')
    return model


def data(samples=16, features=5):
    rng = np.random.default_rng(0)
    return rng.standard_normal((samples, features)).astype('float32'), np.arange(samples) % 3


def refused_before_any_step(model, match, **arguments):
    """Run fit expecting ValueError(match); check that nothing trained."""
    before = model.get_weights()
    counter = StepCounter()
    arguments['callbacks'] = arguments.get('callbacks', []) + [counter]
    x, y = data()
    with pytest.raises(ValueError, match=match):
        model.fit(arguments.pop('x', x), arguments.pop('y', y), epochs=2, batch_size=4,
                  verbose=0, **arguments)
    assert counter.batches == 0
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert model.optimizer.iterations == 0


def test_validation_data_of_the_wrong_size_is_refused_before_training():
    model = compiled_mlp()
    refused_before_any_step(model, r"x\[0\] is incompatible with input .*expected shape "
                                   r"\(None, 5\), found \(6, 4\)",
                            validation_data=(np.zeros((6, 4), 'float32'), np.zeros(6, 'int64')))


def test_a_checkpoint_naming_val_loss_without_validation_data_is_refused(tmp_path):
    model = compiled_mlp()
    path = tmp_path / 'weights.{epoch:02d}-{val_loss:.2f}.h5'
    refused_before_any_step(model, r"names \['val_loss'\], but fit has no validation data",
                            callbacks=[ModelCheckpoint(str(path))])
    assert list(tmp_path.iterdir()) == []
    # With validation data the same path is fine, and filled in.
    x, y = data()
    model.fit(x, y, epochs=1, batch_size=4, verbose=0, validation_data=(x, y),
              callbacks=[ModelCheckpoint(str(path))])
    assert [p.name for p in tmp_path.iterdir()][0].startswith('weights.01-')


@pytest.mark.parametrize('labels', [[0.5, 1.0, 2.0, 0.0], [0.0, 1.7, 2.0, 1.0]])
def test_sparse_labels_that_are_not_whole_numbers_are_refused(labels):
    model = compiled_mlp()
    y = np.resize(np.array(labels), 16)
    refused_before_any_step(model, 'labels must be whole class indices', y=y)


def test_whole_float_labels_still_train():
    model = compiled_mlp()
    x, y = data()
    model.fit(x, y.astype('float32'), epochs=1, batch_size=4, verbose=0)
    assert model.optimizer.iterations == 4
