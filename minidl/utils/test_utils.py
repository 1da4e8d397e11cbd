"""Keras 2's ``layer_test``: one harness that every layer must pass.

``layer_test(Dense, kwargs={'units': 3}, input_shape=(2, 4))`` checks what
the layer contract promises, the way a model will use the layer:

1. it builds, and ``set_weights(get_weights())`` gives the weights back;
2. ``from_config(get_config())`` makes a layer with the same config;
3. in a functional model its output has the dtype asked for and the shape
   ``compute_output_shape`` and the symbolic call announced, and equals
   ``expected_output`` when one is given;
4. the model rebuilt from its config (with the same weights) predicts the
   same numbers;
5. in a Sequential model it trains one batch (``train_on_batch``) without
   error when it has trainable weights, and predicts the same numbers.
"""

import numpy as np

from minidl.compute import Generator
from minidl.layers import Input
from minidl.models import Model, Sequential


def get_test_data(num_train=1000, num_test=500, input_shape=(10,), output_shape=(2,),
                  classification=True, num_classes=2):
    """Keras 2's random data set for tests: ``((x_train, y_train), (x_test, y_test))``.

    Drawn from numpy's global generator, as in Keras 2 (so ``np.random.seed``
    fixes it). With ``classification``, labels are ints in ``[0, num_classes)``
    and each sample's inputs are normal around its label (sd 0.7), so the
    classes can be told apart; otherwise ``y`` has ``output_shape`` and both
    ``x`` and ``y`` are normal around one uniform number per sample.
    """
    samples = num_train + num_test
    # Keras 2's order of draws: the labels or centres, then sample by sample.
    if classification:
        y = centres = np.random.randint(0, num_classes, size=(samples,))
    else:
        centres = np.random.random((samples,))
        y = np.zeros((samples,) + tuple(output_shape), dtype=np.float32)
    x = np.zeros((samples,) + tuple(input_shape), dtype=np.float32)
    for index in range(samples):
        x[index] = np.random.normal(loc=centres[index], scale=0.7, size=input_shape)
        if not classification:
            y[index] = np.random.normal(loc=centres[index], scale=0.7, size=output_shape)
    return (x[:num_train], y[:num_train]), (x[num_train:], y[num_train:])


def layer_test(layer_cls, kwargs=None, input_shape=None, input_dtype=None, input_data=None,
               expected_output=None, expected_output_dtype=None, fixed_batch_size=False,
               rtol=1e-6, atol=1e-6):
    """Run ``layer_cls(**kwargs)`` through the layer contract's checks; return its output.

    Args:
        layer_cls: The layer class.
        kwargs: Its arguments.
        input_shape: Shape of the input including the batch size; None
            entries are drawn from 1..3. Needed unless ``input_data`` is given.
        input_dtype: dtype of the generated input ('float32' by default).
        input_data: The input array; generated (uniform in [0, 10)) if None.
        expected_output: Array the layer's output must equal (to
            ``rtol``/``atol``).
        expected_output_dtype: dtype the output must have (the input's by default).
        fixed_batch_size: Give the model's Input the batch size too.
        rtol, atol: Tolerances of the comparisons.

    Returns:
        The layer's output on ``input_data``, as a numpy array.

    Raises:
        AssertionError: naming the first check that fails.
    """
    kwargs = dict(kwargs or {})
    input_data = _input_data(input_shape, input_dtype, input_data)
    input_shape = input_data.shape
    expected_output_dtype = np.dtype(expected_output_dtype or input_data.dtype)

    layer = layer_cls(**kwargs)
    layer(input_data)  # builds the weights
    weights = layer.get_weights()
    layer.set_weights(weights)
    for before, after in zip(weights, layer.get_weights()):
        assert np.array_equal(before, after), f'{layer.name}: set_weights changed the weights'
    config = layer.get_config()
    rebuilt = layer_cls.from_config(config)
    assert rebuilt.get_config() == {**config, 'name': rebuilt.name}, \
        f'{layer_cls.__name__}: from_config(get_config()) gives another config'

    layer = layer_cls(**kwargs)
    batch_size = input_shape[0] if fixed_batch_size else None
    inputs = Input(batch_shape=(batch_size,) + tuple(input_shape[1:]), dtype=input_data.dtype)
    outputs = layer(inputs)
    assert outputs.dtype == expected_output_dtype, \
        f'{layer.name}: symbolic output dtype {outputs.dtype}, expected {expected_output_dtype}'
    model = Model(inputs, outputs)
    actual = model.predict(input_data)
    assert actual.dtype == expected_output_dtype, \
        f'{layer.name}: output dtype {actual.dtype}, expected {expected_output_dtype}'
    announced = layer.compute_output_shape((batch_size,) + tuple(input_shape[1:]))
    for shapes in (announced, outputs.shape):
        assert _fits(shapes, actual.shape), \
            f'{layer.name}: output shape {actual.shape} does not fit the announced {shapes}'
    if expected_output is not None:
        np.testing.assert_allclose(actual, expected_output, rtol=rtol, atol=atol,
                                   err_msg=f'{layer.name}: output differs from expected_output')

    recreated = Model.from_config(model.get_config(),
                                  custom_objects={layer_cls.__name__: layer_cls})
    recreated.set_weights(model.get_weights())
    np.testing.assert_allclose(recreated.predict(input_data), actual, rtol=rtol, atol=atol,
                               err_msg=f'{layer.name}: the model rebuilt from its config '
                                       f'predicts differently')

    sequential = Sequential([layer_cls(**kwargs)])
    sequential.build((batch_size,) + tuple(input_shape[1:]))
    sequential.set_weights(model.get_weights())
    np.testing.assert_allclose(sequential.predict(input_data), actual, rtol=rtol, atol=atol,
                               err_msg=f'{layer.name}: a Sequential model predicts differently')
    if sequential.trainable_weights and expected_output_dtype.kind == 'f':
        sequential.compile('rmsprop', 'mse')
        sequential.train_on_batch(input_data, actual)
    return actual


def _input_data(input_shape, input_dtype, input_data):
    if input_data is not None:
        return np.asarray(input_data)
    if input_shape is None:
        raise ValueError('layer_test: give input_shape or input_data')
    generator = Generator(1337)
    shape = tuple(int(generator.integers(1, 4)) if size is None else size
                  for size in input_shape)
    dtype = np.dtype(input_dtype or 'float32')
    values = 10 * generator.uniform(shape, dtype='float64')
    return values.astype(dtype)


def _fits(announced, actual):
    """Whether ``actual`` matches ``announced`` where ``announced`` knows the size."""
    announced = tuple(announced)
    return len(announced) == len(actual) and all(
        expected is None or expected == size for expected, size in zip(announced, actual))
