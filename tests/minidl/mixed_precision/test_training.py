"""Training with 'mixed_float16': the float32 result within a stated tolerance, the same
bits on a rerun, small updates kept by the float32 master weights, saving and loading."""

import hashlib
import json

import h5py
import numpy as np
import pytest

import minidl
from minidl import mixed_precision
from minidl.layers import BatchNormalization, Conv2D, Dense, Flatten, MaxPooling2D
from minidl.mixed_precision import LossScaleOptimizer
from minidl.models import Sequential, load_model
from minidl.optimizers import SGD


@pytest.fixture(scope='module')
def digits():
    pytest.importorskip('sklearn')
    from minidl.datasets import digits as loader
    (x_train, y_train), (x_test, y_test) = loader.load_data()
    return (x_train.astype(np.float32) / 16, y_train), (x_test.astype(np.float32) / 16, y_test)


def _mlp():
    return Sequential([Flatten(input_shape=(8, 8)), Dense(64, activation='relu'),
                       Dense(10, activation='softmax')])


def _cnn():
    return Sequential([Conv2D(8, 3, activation='relu', input_shape=(8, 8, 1)),
                       BatchNormalization(), MaxPooling2D(), Flatten(),
                       Dense(10, activation='softmax')])


def _train(digits, make, policy, epochs, seed=1):
    """Held-out loss and accuracy, and the trained model, for one policy and seed."""
    (x_train, y_train), (x_test, y_test) = digits
    if make is _cnn:
        x_train, x_test = x_train[..., None], x_test[..., None]
    mixed_precision.set_global_policy(policy)
    minidl.set_seed(seed)
    model = make()
    optimizer = SGD(0.1, momentum=0.9)
    if policy == 'mixed_float16':
        optimizer = LossScaleOptimizer(optimizer)
    model.compile(optimizer, 'sparse_categorical_crossentropy', metrics=['accuracy'])
    with np.errstate(all='ignore'):  # the steps that overflow float16 (and are skipped)
        model.fit(x_train, y_train, batch_size=32, epochs=epochs, verbose=0)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    mixed_precision.set_global_policy(None)
    return loss, accuracy, model


# Stated tolerance: held-out accuracy within 2.5 points and held-out loss within 0.04 of
# the float32 run with the same seed (float16 rounding and the few steps skipped while
# the scale falls from 2**15 make the trajectories drift apart, not the result).
@pytest.mark.parametrize('make, epochs', [(_mlp, 10), (_cnn, 6)])
def test_mixed_float16_trains_to_the_float32_result(digits, make, epochs):
    loss32, accuracy32, _ = _train(digits, make, 'float32', epochs)
    loss16, accuracy16, model = _train(digits, make, 'mixed_float16', epochs)
    assert accuracy32 > 0.93 and accuracy16 > 0.93
    assert abs(accuracy16 - accuracy32) <= 0.025
    assert abs(loss16 - loss32) <= 0.04
    assert all(weight.dtype == np.float32 for weight in model.weights)
    assert model.optimizer.loss_scale < 2 ** 15  # it did overflow, and recovered


def _digest(model):
    digest = hashlib.sha256()
    for array in model.get_weights() + model.optimizer.get_weights():
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def test_two_runs_with_the_same_seed_give_the_same_bits(digits):
    subset = ((digits[0][0][:256], digits[0][1][:256]), digits[1])
    first = _train(subset, _cnn, 'mixed_float16', 2)[2]
    second = _train(subset, _cnn, 'mixed_float16', 2)[2]
    other_seed = _train(subset, _cnn, 'mixed_float16', 2, seed=2)[2]
    assert _digest(first) == _digest(second) != _digest(other_seed)


def test_float32_master_weights_keep_updates_that_float16_rounds_away():
    # 1 + 1e-4 is 1 in float16 (its spacing at 1 is 2**-10): a float16 weight never
    # moves, while the float32 master of a mixed layer takes every step.
    assert np.float16(1) - np.float16(1e-4) == np.float16(1)
    x, y = np.ones((1, 1), np.float32), np.zeros((1, 1), np.float32)
    final = {}
    for policy in ('float16', 'mixed_float16', 'float32'):
        model = Sequential([Dense(1, use_bias=False, kernel_initializer='ones',
                                  input_shape=(1,), dtype=policy)])
        optimizer = SGD(1e-4)  # the gradient of |w x - 0| is exactly 1
        if policy == 'mixed_float16':
            optimizer = LossScaleOptimizer(optimizer)
        model.compile(optimizer, 'mean_absolute_error')
        for _ in range(20):
            model.train_on_batch(x, y)
        final[policy] = model.get_weights()[0].item()
    expected = np.float32(1)
    for _ in range(20):
        expected = np.float32(expected - np.float32(1e-4))
    assert final['float16'] == 1.0
    assert final['mixed_float16'] == final['float32'] == expected
    assert abs(expected - (1 - 20e-4)) < 1e-6


def test_saving_and_loading_with_a_policy_set(tmp_path, digits):
    subset = ((digits[0][0][:256], digits[0][1][:256]), digits[1])
    _, _, model = _train(subset, _cnn, 'mixed_float16', 1)
    path = str(tmp_path / 'mixed.h5')
    mixed_precision.set_global_policy('mixed_float16')
    model.save(path)
    with h5py.File(path, 'r') as file:
        stored = []
        file['model_weights'].visititems(
            lambda name, item: stored.append(item.dtype) if isinstance(item, h5py.Dataset)
            else None)
        config = json.loads(file.attrs['model_config'])
    assert stored and all(dtype == np.float32 for dtype in stored)
    policies = [layer['config']['dtype'] for layer in config['config']['layers']]
    assert {'class_name': 'Policy', 'config': {'name': 'mixed_float16'}} in policies
    # Loaded without the global policy: the layers' configs carry it.
    mixed_precision.set_global_policy(None)
    loaded = load_model(path)
    assert [layer.dtype_policy.name for layer in loaded.layers] == \
        [layer.dtype_policy.name for layer in model.layers]
    assert isinstance(loaded.optimizer, LossScaleOptimizer)
    assert (loaded.optimizer.loss_scale, loaded.optimizer.iterations) == \
        (model.optimizer.loss_scale, model.optimizer.iterations)
    x = subset[1][0][:32, ..., None]
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    # One more step from the loaded state gives the original's next weights bit for bit.
    y = subset[1][1][:32]
    model.train_on_batch(x, y)
    loaded.train_on_batch(x, y)
    assert _digest(loaded) == _digest(model)
