"""Write the tf-keras 2.x full-model files that test_tf_keras_files.py loads (run out of band).

Not part of the test suite and not run by it: tf-keras is not a dependency
of minidl. The committed ``.h5`` / ``.npz`` files next to this script were
written by it with tf-keras 2.21.0 and tensorflow-cpu 2.21.0 (Python 3.11,
CPU), in a virtual environment outside the repository::

    python3 -m venv /root/tfkeras-venv
    /root/tfkeras-venv/bin/pip install tf-keras==2.21.0 tensorflow-cpu==2.21.0
    /root/tfkeras-venv/bin/python tests/minidl/saving/tfkeras_fixtures/make_fixtures.py

Each model is tiny, built and compiled as a tf-keras user would, trained
for two steps with fixed seeds (so the optimizer has state) and saved with
``model.save(path, save_format='h5')``. Next to each ``<name>.h5`` is
``<name>.npz`` with the inputs (``x0``, ``x1``, ...) and tf-keras's
predictions for them (``y0``, ``y1``, ...), the truth the tests compare
minidl's predictions with; then, after saving, tf-keras takes one more
training step on the first three samples (targets ``t0``, ``t1``, ...) and
the weights it ends with (``w0``, ``w1``, ... in ``get_weights`` order) are
what the saved optimizer state implies for that step. ``custom_layer.h5`` uses the layer ``Scale``
registered as ``fixtures>Scale``; the test defines the same layer in minidl.
"""

import os
import pathlib

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
os.environ.setdefault('CUDA_VISIBLE_DEVICES', '')

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
RNG = np.random.default_rng(0)


def floats(*shape):
    return RNG.standard_normal(shape).astype('float32')


def classes(count, n):
    return RNG.integers(0, count, n)


@keras.saving.register_keras_serializable(package='fixtures')
class Scale(keras.layers.Layer):
    """``inputs * scale + offset`` with a trainable per-feature ``scale`` and a fixed offset."""

    def __init__(self, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.offset = offset

    def build(self, input_shape):
        self.scale = self.add_weight(name='scale', shape=(input_shape[-1],),
                                     initializer='ones', trainable=True)
        super().build(input_shape)

    def call(self, inputs):
        return inputs * self.scale + self.offset

    def get_config(self):
        return {**super().get_config(), 'offset': self.offset}


def mlp(optimizer):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation='relu'),
                              keras.layers.Dense(3, activation='softmax')])
    model.compile(optimizer, 'sparse_categorical_crossentropy', metrics=['accuracy'])
    return model, [floats(6, 4)], classes(3, 6)


def cnn_batchnorm():
    model = keras.Sequential([
        keras.Input((6, 6, 2)), keras.layers.Conv2D(3, 3, padding='same', use_bias=False),
        keras.layers.BatchNormalization(), keras.layers.Activation('relu'),
        keras.layers.MaxPooling2D(), keras.layers.Flatten(),
        keras.layers.Dense(2, activation='softmax')])
    model.compile(keras.optimizers.Adam(0.01), 'categorical_crossentropy', metrics=['accuracy'])
    return model, [floats(6, 6, 6, 2)], np.eye(2, dtype='float32')[classes(2, 6)]


def embedding_lstm():
    model = keras.Sequential([
        keras.Input((5,), dtype='int32'), keras.layers.Embedding(10, 3, mask_zero=True),
        keras.layers.LSTM(4), keras.layers.Dense(1, activation='sigmoid')])
    model.compile(keras.optimizers.Adam(0.01), 'binary_crossentropy')
    tokens = RNG.integers(1, 10, (6, 5)).astype('int32')
    for row, length in enumerate([5, 3, 1, 4, 2, 5]):
        tokens[row, length:] = 0  # padded at the end: the mask must skip these steps
    return model, [tokens], classes(2, 6).astype('float32')


def bidirectional_gru():
    model = keras.Sequential([
        keras.Input((4, 3)), keras.layers.Bidirectional(keras.layers.GRU(3)),
        keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(0.01), 'mse')
    return model, [floats(6, 4, 3)], floats(6, 1)


def two_inputs_two_outputs():
    left, right = keras.Input((4,), name='left'), keras.Input((3,), name='right')
    merged = keras.layers.concatenate([keras.layers.Dense(4, activation='tanh')(left),
                                       keras.layers.Dense(4, activation='tanh')(right)])
    label = keras.layers.Dense(2, activation='softmax', name='label')(merged)
    value = keras.layers.Dense(1, name='value')(merged)
    model = keras.Model([left, right], [label, value])
    # Loss and metric objects (their configs carry tf-keras's 'fn' and 'ignore_class').
    model.compile(keras.optimizers.Adam(0.01),
                  loss={'label': keras.losses.SparseCategoricalCrossentropy(),
                        'value': keras.losses.MeanSquaredError()},
                  loss_weights={'label': 1.0, 'value': 0.5},
                  metrics={'label': [keras.metrics.SparseCategoricalAccuracy()],
                           'value': ['mae']})
    return model, [floats(6, 4), floats(6, 3)], [classes(2, 6), floats(6, 1)]


def custom_layer():
    model = keras.Sequential([keras.Input((4,)), Scale(offset=0.5),
                              keras.layers.Dense(2)])
    model.compile(keras.optimizers.Adam(0.01), 'mse')
    return model, [floats(6, 4)], floats(6, 2)


FIXTURES = {
    'mlp': lambda: mlp(keras.optimizers.Adam(0.01)),
    'mlp_sgd': lambda: mlp(keras.optimizers.SGD(0.05, momentum=0.9)),
    # tf.keras's optimizers before 2.11, still offered: the layout of Keras 2.2.4's files.
    'mlp_legacy_adam': lambda: mlp(keras.optimizers.legacy.Adam(0.01)),
    'cnn_batchnorm': cnn_batchnorm,
    'embedding_lstm': embedding_lstm,
    'bidirectional_gru': bidirectional_gru,
    'two_inputs_two_outputs': two_inputs_two_outputs,
    'custom_layer': custom_layer,
}


def main():
    for name, build in FIXTURES.items():
        keras.backend.clear_session()  # layer names from 'dense' again in every file
        keras.utils.set_random_seed(0)
        model, inputs, targets = build()
        x = inputs if len(inputs) > 1 else inputs[0]
        model.fit(x, targets, batch_size=3, epochs=1, shuffle=False, verbose=0)  # two steps
        predictions = model.predict(x, verbose=0)
        if not isinstance(predictions, list):
            predictions = [predictions]
        path = HERE / f'{name}.h5'
        model.save(path, save_format='h5')
        arrays = {f'x{i}': array for i, array in enumerate(inputs)}
        arrays.update({f'y{i}': np.asarray(array) for i, array in enumerate(predictions)})
        # One more step on the first three samples, from the saved state: the weights it
        # gives are what the saved optimizer state implies.
        first = [array[:3] for array in inputs]
        labels = [array[:3] for array in targets] if isinstance(targets, list) else targets[:3]
        model.train_on_batch(first if len(first) > 1 else first[0], labels)
        arrays.update({f't{i}': np.asarray(array) for i, array in
                       enumerate(labels if isinstance(labels, list) else [labels])})
        arrays.update({f'w{i}': array for i, array in enumerate(model.get_weights())})
        np.savez(HERE / f'{name}.npz', **arrays)
        print(f'{name}: {path.stat().st_size} bytes')
    print('tf-keras', keras.__version__, 'tensorflow', tf.__version__)


if __name__ == '__main__':
    main()
