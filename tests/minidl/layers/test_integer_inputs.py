"""Boolean and integer data take a layer's float dtype, giving the bits of float32 data."""

import numpy as np

from minidl import set_seed
from minidl.layers import LSTM, Conv2D, Dense
from minidl.models import Sequential

FLAGS = np.random.default_rng(0).random((4, 5, 3)) > 0.5  # one-hot-like booleans


def _trained(x, y):
    set_seed(5)
    model = Sequential([LSTM(4, input_shape=(5, 3)), Dense(2, activation='softmax')])
    model.compile('rmsprop', 'categorical_crossentropy')
    model.train_on_batch(x, y)
    return model.get_weights(), model.predict(x)


def test_boolean_and_integer_data_train_and_predict_as_float32_data():
    y = np.eye(2, dtype='float32')[[0, 1, 1, 0]]
    expected = _trained(FLAGS.astype('float32'), y)
    for x in (FLAGS, FLAGS.astype('int64'), FLAGS.astype('uint8')):
        weights, predictions = _trained(x, y)
        assert predictions.dtype == np.float32
        np.testing.assert_array_equal(predictions, expected[1])
        for a, b in zip(weights, expected[0]):
            np.testing.assert_array_equal(a, b)


def test_layers_called_directly_cast_boolean_and_integer_data():
    for layer, x in [(LSTM(3), FLAGS), (Dense(2), FLAGS[:, 0]),
                     (Conv2D(2, 2), FLAGS[..., None].astype('int32'))]:
        output = layer(x)
        assert output.dtype == np.float32
        np.testing.assert_array_equal(output.numpy(), layer(x.astype('float32')).numpy())


def test_indices_reach_an_embedding_inside_a_wrapper_unrounded():
    from minidl.layers import Embedding, Input, TimeDistributed
    from minidl.models import Model
    words = Input((2, 3), dtype='int64')
    wrapped = TimeDistributed(Embedding(2 ** 24 + 3, 1))
    model = Model(words, wrapped(words))
    index = 2 ** 24 + 1  # float32 would round it to 2**24
    table = wrapped.layer.get_weights()[0]
    assert table[index] != table[index - 1]
    np.testing.assert_array_equal(model.predict(np.full((1, 2, 3), index))[0, 0, 0],
                                  table[index])
