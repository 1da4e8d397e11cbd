import numpy as np
import pytest

from minidl.callbacks import LearningRateScheduler, ReduceLROnPlateau
from tests.minidl.callbacks.fakes import FakeModel, fit


def test_reduce_on_plateau_with_cooldown_and_min_lr(capsys):
    model = FakeModel(learning_rate=1.0)
    reducer = ReduceLROnPlateau(factor=0.5, patience=1, cooldown=2, min_lr=0.2, verbose=1)
    # Never improving after epoch 0. By hand: reductions after epochs 1, 3 and 5
    # (each followed by 2 cooldown epochs, the second of which counts again);
    # the third is clipped to min_lr, and at min_lr nothing more happens.
    callbacks, _ = fit(model, [reducer], [{'loss': 1.0, 'val_loss': 1.0}] * 8)
    assert callbacks.history.history['lr'] == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2]
    assert model.optimizer.learning_rate == 0.2
    assert capsys.readouterr().out == (
        '\nEpoch 00002: ReduceLROnPlateau reducing learning rate to 0.5.\n'
        '\nEpoch 00004: ReduceLROnPlateau reducing learning rate to 0.25.\n'
        '\nEpoch 00006: ReduceLROnPlateau reducing learning rate to 0.2.\n')


def test_improvements_by_more_than_min_delta_reset_the_wait():
    model = FakeModel(learning_rate=1.0)
    reducer = ReduceLROnPlateau(monitor='val_accuracy', factor=0.1, patience=2, min_delta=0.05)
    # 'acc' in the name: maximized. 0.62 and 0.64 are within min_delta of 0.6;
    # 0.7 improves; then 0.7 and 0.71 make two epochs of waiting: one reduction,
    # after the fifth epoch (the logs get the rate before it).
    values = [0.6, 0.62, 0.7, 0.7, 0.71, 0.72]
    callbacks, _ = fit(model, [reducer], [{'val_accuracy': v} for v in values])
    assert callbacks.history.history['lr'] == [1.0, 1.0, 1.0, 1.0, 1.0, 0.1]
    assert model.optimizer.learning_rate == pytest.approx(0.1)
    assert reducer.best == 0.7


def test_reduce_on_plateau_min_mode_and_epsilon_alias():
    model = FakeModel(learning_rate=0.8)
    with pytest.warns(DeprecationWarning, match='epsilon'):
        reducer = ReduceLROnPlateau(monitor='val_accuracy', mode='min', patience=1,
                                    factor=0.5, epsilon=0.0)
    fit(model, [reducer], [{'val_accuracy': v} for v in (0.5, 0.4, 0.6)])
    assert reducer.min_delta == 0.0 and model.optimizer.learning_rate == 0.4


def test_reduce_on_plateau_arguments_and_missing_monitor():
    with pytest.raises(ValueError, match='factor >= 1.0. Got 1.5'):
        ReduceLROnPlateau(factor=1.5)
    with pytest.raises(ValueError, match='cooldown.*-1'):
        ReduceLROnPlateau(cooldown=-1)
    with pytest.raises(TypeError, match='patiance'):
        ReduceLROnPlateau(patiance=3)
    model = FakeModel(learning_rate=1.0)
    with pytest.warns(RuntimeWarning, match='`val_loss` which is not available'):
        callbacks, _ = fit(model, [ReduceLROnPlateau(patience=0)], [{'loss': 1.0}] * 3)
    assert model.optimizer.learning_rate == 1.0
    assert callbacks.history.history['lr'] == [1.0] * 3


def test_non_chief_reduces_alike_and_prints_nothing(capsys):
    rates = []
    for is_chief in (True, False):
        model = FakeModel(is_chief=is_chief, learning_rate=1.0)
        fit(model, [ReduceLROnPlateau(patience=1, verbose=1)], [{'val_loss': 1.0}] * 4)
        rates.append(model.optimizer.learning_rate)
    # Reductions after epochs 1, 2 and 3, on both; printed by the chief alone.
    assert rates[0] == rates[1] == pytest.approx(0.001)
    assert capsys.readouterr().out.count('reducing') == 3


def test_scheduler_with_two_arguments_sets_and_logs_the_rate(capsys):
    model = FakeModel(learning_rate=0.1)
    seen = []

    def schedule(epoch, lr):
        seen.append((epoch, lr))
        return lr * 0.5 if epoch >= 1 else lr

    callbacks, _ = fit(model, [LearningRateScheduler(schedule, verbose=1)], [{'loss': 1.0}] * 3)
    assert seen == [(0, 0.1), (1, 0.1), (2, 0.05)]
    assert callbacks.history.history['lr'] == [0.1, 0.05, 0.025]
    assert capsys.readouterr().out == (
        '\nEpoch 00001: LearningRateScheduler setting learning rate to 0.1.\n'
        '\nEpoch 00002: LearningRateScheduler setting learning rate to 0.05.\n'
        '\nEpoch 00003: LearningRateScheduler setting learning rate to 0.025.\n')


def test_scheduler_with_one_argument_and_numpy_floats():
    model = FakeModel()
    callbacks, _ = fit(model, [LearningRateScheduler(lambda epoch: np.float32(0.5) / (epoch + 1))],
                       [{'loss': 1.0}] * 2, initial_epoch=1)
    assert callbacks.history.history['lr'] == [0.25, pytest.approx(0.5 / 3)]
    assert type(model.optimizer.learning_rate) is float


def test_scheduler_errors():
    with pytest.raises(ValueError, match='should be float, got 1 at epoch 0'):
        fit(FakeModel(), [LearningRateScheduler(lambda epoch, lr: 1)], [{'loss': 1.0}])

    def broken(epoch, lr):
        raise TypeError('inside the schedule')

    with pytest.raises(TypeError, match='inside the schedule'):
        fit(FakeModel(), [LearningRateScheduler(broken)], [{'loss': 1.0}])
    with pytest.raises(TypeError, match='callable'):
        LearningRateScheduler(0.1)


@pytest.mark.parametrize('callback', [LearningRateScheduler(lambda epoch: 0.1),
                                      ReduceLROnPlateau()])
def test_a_schedule_learning_rate_cannot_be_set(callback):
    model = FakeModel()
    model.optimizer.learning_rate = lambda step: 0.1
    with pytest.raises(TypeError, match='float learning_rate'):
        fit(model, [callback], [{'loss': 1.0}])
