import math
import warnings

import numpy as np
import pytest

from minidl.callbacks import EarlyStopping, LambdaCallback, TerminateOnNaN
from tests.minidl.callbacks.fakes import FakeModel, fit


def logs_of(name, values):
    return [{'loss': 1.0, name: value} for value in values]


def test_patience_counts_epochs_without_improvement_then_restores_the_best(capsys):
    model = FakeModel()
    stopper = EarlyStopping(patience=2, restore_best_weights=True, verbose=1)
    # Best at epoch 1 (0.8); epochs 2 and 3 do not improve: stop after epoch 3.
    callbacks, run = fit(model, [stopper], logs_of('val_loss', [1.0, 0.8, 0.9, 0.85, 0.7]))
    assert run == 4 and stopper.stopped_epoch == 3 and stopper.best_epoch == 1
    assert stopper.best == 0.8
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0, 1.0])
    assert callbacks.history.epoch == [0, 1, 2, 3]
    assert capsys.readouterr().out == (
        'Restoring model weights from the end of the best epoch: 2.\n'
        'Epoch 00004: early stopping\n')


def test_a_run_that_does_not_stop_keeps_its_last_weights():
    model = FakeModel()
    stopper = EarlyStopping(patience=5, restore_best_weights=True)
    _, run = fit(model, [stopper], logs_of('val_loss', [0.5, 0.9, 0.9]))
    assert run == 3 and stopper.stopped_epoch == 0
    np.testing.assert_array_equal(model.weights[0], [2.0, 2.0, 2.0])


def test_min_delta_is_the_smallest_improvement():
    stopper = EarlyStopping(monitor='val_loss', min_delta=0.15, patience=2)
    # 0.9 is not 0.15 below 1.0; 0.8 is; 0.7 and 0.69 are not below 0.8 - 0.15.
    _, run = fit(FakeModel(), [stopper], logs_of('val_loss', [1.0, 0.9, 0.8, 0.7, 0.69, 0.1]))
    assert run == 5 and stopper.best == 0.8 and stopper.stopped_epoch == 4


def test_baseline_not_beaten_stops_after_patience_epochs_and_restores_the_best():
    model = FakeModel()
    stopper = EarlyStopping(monitor='val_accuracy', baseline=0.9, patience=2,
                            restore_best_weights=True)
    _, run = fit(model, [stopper], logs_of('val_accuracy', [0.5, 0.6, 0.7, 0.8]))
    assert run == 2 and stopper.best == 0.6
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0, 1.0])


def test_start_from_epoch_skips_the_warm_up():
    stopper = EarlyStopping(monitor='loss', start_from_epoch=2)
    _, run = fit(FakeModel(), [stopper], [{'loss': v} for v in (0.1, 0.2, 0.3, 0.4, 0.5)])
    assert run == 4 and stopper.best == 0.3


def test_patience_0_stops_at_the_first_epoch_without_improvement():
    improving = EarlyStopping(monitor='loss')
    _, run = fit(FakeModel(), [improving], [{'loss': v} for v in (1.0, 0.9, 0.8, 0.7)])
    assert run == 4 and improving.stopped_epoch == 0
    stalling = EarlyStopping(monitor='loss')
    _, run = fit(FakeModel(), [stalling], [{'loss': v} for v in (1.0, 0.9, 0.95, 0.7)])
    assert run == 3 and stalling.stopped_epoch == 2


@pytest.mark.parametrize('monitor, maximize', [
    ('val_acc', True), ('val_accuracy', True), ('auc', True), ('val_loss', False),
    ('accuracy_gap', False)])
def test_auto_mode_follows_the_name(monitor, maximize):
    stopper = EarlyStopping(monitor=monitor, patience=1)
    _, run = fit(FakeModel(), [stopper], logs_of(monitor, [0.5, 0.6, 0.7]))
    assert (run == 3) == maximize


def test_missing_monitor_warns_and_never_stops():
    stopper = EarlyStopping(monitor='val_loss')
    with pytest.warns(RuntimeWarning, match='`val_loss` which is not available.*loss'):
        _, run = fit(FakeModel(), [stopper], [{'loss': 1.0}] * 3)
    assert run == 3


def test_non_chief_stops_and_restores_alike_but_prints_nothing(capsys):
    chief, worker = FakeModel(), FakeModel(is_chief=False)
    logs = logs_of('val_loss', [1.0, 0.8, 0.9, 0.85, 0.7])
    runs = [fit(model, [EarlyStopping(patience=2, restore_best_weights=True, verbose=1)], logs)[1]
            for model in (chief, worker)]
    assert runs == [4, 4]
    np.testing.assert_array_equal(worker.weights[0], chief.weights[0])
    assert capsys.readouterr().out.count('early stopping') == 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode.*'maximum'"):
        EarlyStopping(mode='maximum')
    with pytest.raises(ValueError, match='patience.*-1'):
        EarlyStopping(patience=-1)


@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf])
def test_terminate_on_nan_stops_at_the_bad_batch(capsys, bad):
    def batch_logs(epoch, step):
        return {'loss': bad if (epoch, step) == (1, 1) else 0.5}

    seen = []
    counter = LambdaCallback(on_batch_end=lambda batch, logs: seen.append(batch))
    _, run = fit(FakeModel(), [TerminateOnNaN(), counter], [{'loss': 0.5}] * 3, steps=3,
                 batch_logs=batch_logs)
    assert run == 2 and seen == [0, 1, 2, 0, 1]
    assert capsys.readouterr().out == 'Batch 1: Invalid loss, terminating training\n'


def test_terminate_on_nan_on_a_worker_stops_silently(capsys):
    _, run = fit(FakeModel(is_chief=False), [TerminateOnNaN()], [{'loss': math.nan}] * 2)
    assert run == 1 and capsys.readouterr().out == ''


@pytest.mark.parametrize('monitor, logged', [('val_acc', 'val_accuracy'),
                                             ('val_accuracy', 'val_acc')])
def test_keras_2_2_and_2_3_accuracy_names_find_each_other(monitor, logged):
    # Keras 2.2.4 logged metrics=['accuracy'] as 'acc', Keras 2.3 as 'accuracy'.
    stopper = EarlyStopping(monitor=monitor, patience=1)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no "not available" warning
        _, run = fit(FakeModel(), [stopper], logs_of(logged, [0.5, 0.7, 0.6, 0.65]))
    assert run == 3 and stopper.best == 0.7
