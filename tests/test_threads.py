"""Threads do not disturb each other's gradient recording or loss terms.

Each interleaving is forced with barriers, so every run of a test takes the
same path; a timeout turns a broken hand-over into a failure, not a hang.
"""

import threading

import numpy as np
import pytest

import minidl
from minidl import Tensor, layers, no_grad, regularizers
from minidl.models import Sequential

TIMEOUT = 30


def run_thread(target):
    """Start ``target`` in a thread; the returned dict gets its result or its exception."""
    outcome = {}

    def body():
        try:
            outcome['result'] = target()
        except BaseException as error:  # reported by the test in the main thread
            outcome['error'] = error

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, outcome


def finish(thread, outcome):
    thread.join(TIMEOUT)
    assert not thread.is_alive(), 'the second thread did not finish'
    if 'error' in outcome:
        raise outcome['error']
    return outcome.get('result')


def test_no_grad_in_one_thread_leaves_recording_on_in_another():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    inside, release = threading.Event(), threading.Event()

    def other():
        with no_grad():
            inside.set()
            assert release.wait(TIMEOUT)
            return minidl.config.grad_enabled, (x * 2).requires_grad

    thread, outcome = run_thread(other)
    assert inside.wait(TIMEOUT)
    # The other thread is now inside no_grad: this one still records.
    assert minidl.config.grad_enabled is True
    y = (x * x).sum()
    release.set()
    assert finish(thread, outcome) == (False, False)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])  # d(sum x^2)/dx = 2x


def test_overlapping_no_grad_blocks_do_not_leave_recording_off():
    # Enter A, enter B, leave A, leave B: with one shared switch, B restores the
    # False it saw on entering, and recording stays off for every thread.
    steps = threading.Barrier(2, timeout=TIMEOUT)

    def block_a():
        with no_grad():
            steps.wait()  # 1: A is inside
            steps.wait()  # 2: B is inside
        steps.wait()  # 3: A has left

    thread, outcome = run_thread(block_a)
    steps.wait()
    with no_grad():
        steps.wait()
        steps.wait()
        assert minidl.config.grad_enabled is False
    finish(thread, outcome)
    assert minidl.config.grad_enabled is True
    assert (Tensor([1.0], requires_grad=True) * 3).requires_grad


def test_a_new_thread_records_even_when_started_inside_no_grad():
    with no_grad():
        thread, outcome = run_thread(
            lambda: (minidl.config.grad_enabled,
                     (Tensor([1.0], requires_grad=True) * 3).requires_grad))
        assert finish(thread, outcome) == (True, True)
        assert minidl.config.grad_enabled is False


def test_config_grad_enabled_is_set_per_thread():
    def set_off():
        minidl.config.grad_enabled = False
        return minidl.config.grad_enabled

    thread, outcome = run_thread(set_off)
    assert finish(thread, outcome) is False
    assert minidl.config.grad_enabled is True


class Gate:
    """A Lambda function that, in the training thread while active, lets the predicting
    thread run its predict up to the same point, so both forward passes overlap."""

    def __init__(self):
        self.active, self.trainer = False, threading.get_ident()
        self.start, self.both_inside, self.step_done = (
            threading.Barrier(2, timeout=TIMEOUT) for _ in range(3))

    def __call__(self, x):
        if self.active:
            if threading.get_ident() == self.trainer:
                self.start.wait()  # the predictor starts its predict ...
                self.both_inside.wait()  # ... and is now inside no_grad, past the first layer
            else:
                self.both_inside.wait()
                self.step_done.wait()  # the trainer has finished a whole step meanwhile
        return x

    def abort(self):
        for barrier in (self.start, self.both_inside, self.step_done):
            barrier.abort()


class RecordSteps(minidl.callbacks.Callback):
    """Keeps the weights before and after each step, then releases the predictor."""

    def __init__(self, gate):
        super().__init__()
        self.gate, self.before, self.after = gate, [], []

    def on_train_batch_begin(self, batch, logs=None):
        self.before.append(self.model.get_weights())

    def on_train_batch_end(self, batch, logs=None):
        self.after.append(self.model.get_weights())
        if self.gate.active:
            self.gate.step_done.wait()


def make_model(gate):
    minidl.set_seed(7)
    model = Sequential([
        layers.Dense(16, activation='relu', input_shape=(8,),
                     activity_regularizer=regularizers.l2(0.05)),
        layers.Lambda(gate),
        layers.Dropout(0.25),
        layers.Dense(3, activation='softmax'),
    ])
    model.compile('sgd', 'categorical_crossentropy')
    return model


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_predict_in_another_thread_during_fit():
    data = np.random.default_rng(3)
    x = data.standard_normal((96, 8)).astype('float32')
    y = np.eye(3, dtype='float32')[data.integers(0, 3, 96)]
    x_predict = data.standard_normal((5, 8)).astype('float32')

    reference_gate = Gate()
    reference = make_model(reference_gate)
    reference.fit(x, y, batch_size=16, epochs=2, verbose=0)

    gate = Gate()
    model = make_model(gate)
    steps = RecordSteps(gate)

    def predict_at_every_step():
        predictions = []
        while True:
            gate.start.wait()
            if not gate.active:  # fit has ended
                return predictions
            predictions.append(model.predict(x_predict, batch_size=5))

    gate.active = True
    thread, outcome = run_thread(predict_at_every_step)
    try:
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[steps])
    except BaseException:
        gate.abort()  # frees the predictor from whichever barrier it waits at
        raise
    finally:
        gate.active = False
    gate.start.wait()
    predictions = finish(thread, outcome)

    for trained, expected in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(trained, expected)
    assert len(predictions) == len(steps.before) == 12
    # Each predict ran its first layer before step k's update and its last after it.
    for prediction, before, after in zip(predictions, steps.before, steps.after):
        hidden = np.maximum(x_predict @ before[0] + before[1], 0)
        np.testing.assert_allclose(prediction, softmax(hidden @ after[2] + after[3]),
                                   rtol=1e-5, atol=1e-7)
    assert not any(np.array_equal(b[2], a[2]) for b, a in zip(steps.before, steps.after))


@pytest.fixture(autouse=True)
def recording_on_afterwards():
    yield
    assert minidl.config.grad_enabled is True
