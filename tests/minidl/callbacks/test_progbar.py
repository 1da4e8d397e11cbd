import io
import re
import sys

import pytest

from minidl.callbacks import CallbackList, ProgbarLogger
from minidl.callbacks.progress_line import (
    format_eta, format_rate, format_value, live_line, summary_line)
from tests.minidl.callbacks.fakes import FakeModel, fit

TIME = r'\d+'
RATE = r'\d+(s|ms|us)'
EPOCH_LOGS = [{'loss': 0.30118, 'accuracy': 0.9, 'val_loss': 0.25, 'val_accuracy': 0.92},
              {'loss': 0.2, 'accuracy': 0.00002, 'val_loss': 0.24, 'val_accuracy': 0.93}]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def as_terminal(monkeypatch):
    """Make sys.stdout a terminal, with every batch redrawn (no time-based skipping).

    Called in the test itself: pytest's capture resets sys.stdout after fixtures.
    """
    out = Terminal()
    monkeypatch.setattr(sys, 'stdout', out)
    monkeypatch.setattr(ProgbarLogger, 'refresh_interval', 0)
    return out


def test_value_format_is_keras_four_decimals_or_scientific():
    assert format_value(0.30118) == ' 0.3012'
    assert format_value(-2.5) == ' -2.5000'
    assert format_value(0.001) == ' 1.0000e-03'
    assert format_value(0.0) == ' 0.0000e+00'
    assert format_value(float('nan')) == ' nan'
    assert format_value('text') == ' text'


def test_rates_and_eta():
    assert format_rate(0.02, 'step') == ' 20ms/step'
    assert format_rate(3.4, 'epoch') == ' 3s/epoch'
    assert format_rate(2.5e-5, 'step') == ' 25us/step'
    assert format_rate(0, 'step') == ' 0s/step'
    assert [format_eta(s) for s in (7.9, 125, 3725)] == ['7s', '2:05', '1:02:05']


def test_live_line_bar_shapes():
    # 7 of 32: int(30 * 7 / 32) = 6 cells, the last one the head.
    assert live_line(7, 32, 0.7, [('loss', 0.69314)], False) == (
        ' 7/32 [=====>........................] - ETA: 2s - loss: 0.6931')
    assert live_line(32, 32, 0.64, [('loss', 0.3)], True) == (
        '32/32 [==============================] - 1s 20ms/step - loss: 0.3000')
    assert live_line(1, 40, 1.0, [], False).startswith(' 1/40 [')
    assert live_line(1, 40, 1.0, [], False)[7:38] == '.' * 30 + ']'
    assert live_line(5, None, 0.5, [], False) == '      5/Unknown - 0s 100ms/step'
    assert summary_line(32, 0.64, [('loss', 0.3)]) == (
        '32/32 - 1s - loss: 0.3000 - 640ms/epoch - 20ms/step')


@pytest.mark.parametrize('verbose', [1, 2])
def test_one_line_per_epoch_off_a_terminal(capsys, verbose):
    fit(FakeModel(), [], EPOCH_LOGS, steps=32, verbose=verbose)
    lines = capsys.readouterr().out.split('\n')
    assert lines[0] == 'Epoch 1/2' and lines[2] == 'Epoch 2/2' and lines[4] == ''
    assert re.fullmatch(
        f'32/32 - {TIME}s - loss: 0.3012 - accuracy: 0.9000 - val_loss: 0.2500 - '
        f'val_accuracy: 0.9200 - {RATE}/epoch - {RATE}/step', lines[1]), lines[1]
    assert re.fullmatch(
        f'32/32 - {TIME}s - loss: 0.2000 - accuracy: 2.0000e-05 - val_loss: 0.2400 - '
        f'val_accuracy: 0.9300 - {RATE}/epoch - {RATE}/step', lines[3]), lines[3]
    assert len(lines) == 5


def test_verbose_2_on_a_terminal_is_one_line_too(monkeypatch):
    terminal = as_terminal(monkeypatch)
    fit(FakeModel(), [], EPOCH_LOGS[:1], steps=3, verbose=2)
    assert re.fullmatch(f'3/3 - {TIME}s - loss: 0.3012 .* - {RATE}/step\n', terminal.getvalue())


def test_single_epoch_has_no_epoch_header(capsys):
    fit(FakeModel(), [], EPOCH_LOGS[:1], steps=4, verbose=1)
    assert capsys.readouterr().out.startswith('4/4 - ')


def test_live_bar_on_a_terminal(monkeypatch):
    terminal = as_terminal(monkeypatch)
    def batch_logs(epoch, step):
        return {'loss': 0.6931 / (step + 1), 'accuracy': 0.5}
    fit(FakeModel(), [], EPOCH_LOGS[:1], steps=4, verbose=1, batch_logs=batch_logs)
    frames = terminal.getvalue().split('\r')
    assert frames[0] == ''
    assert frames[1:4] == [
        '1/4 [======>.......................] - ETA: 0s - loss: 0.6931 - accuracy: 0.5000',
        '2/4 [==============>...............] - ETA: 0s - loss: 0.3466 - accuracy: 0.5000',
        '3/4 [=====================>........] - ETA: 0s - loss: 0.2310 - accuracy: 0.5000']
    assert frames[4].startswith('4/4 [==============================] - ETA: 0s - loss: 0.1733')
    assert re.fullmatch(
        f'4/4 \\[={{30}}\\] - {TIME}s {RATE}/step - loss: 0.3012 - accuracy: 0.9000 - '
        f'val_loss: 0.2500 - val_accuracy: 0.9200\n', frames[5]), frames[5]
    assert len(frames) == 6


def test_live_bar_redraws_are_throttled_by_the_refresh_interval(monkeypatch):
    terminal = as_terminal(monkeypatch)
    monkeypatch.setattr(ProgbarLogger, 'refresh_interval', 3600)
    fit(FakeModel(), [], EPOCH_LOGS[:1], steps=50, verbose=1)
    frames = terminal.getvalue().split('\r')[1:]
    assert len(frames) == 1 and frames[0].startswith('50/50 [====')


def test_fit_validation_prints_nothing_but_evaluate_prints_its_bar(capsys):
    model = FakeModel()
    callbacks = CallbackList(None, add_progbar=True, model=model, verbose=1, epochs=1, steps=2)
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    callbacks.on_train_batch_end(0, {'loss': 1.0})
    callbacks.on_test_begin()
    callbacks.on_test_batch_end(0, {'loss': 9.0})
    callbacks.on_test_end({'loss': 9.0})
    assert capsys.readouterr().out == ''
    callbacks.on_epoch_end(0, {'loss': 1.0, 'val_loss': 9.0})
    callbacks.on_train_end()
    assert re.fullmatch(f'2/2 - {TIME}s - loss: 1.0000 - val_loss: 9.0000 - .*\n',
                        capsys.readouterr().out)

    evaluate = CallbackList(None, add_progbar=True, model=model, verbose=1, epochs=1, steps=3)
    evaluate.on_test_begin()
    for step in range(3):
        evaluate.on_test_batch_end(step, {'loss': 0.5, 'accuracy': 0.75})
    evaluate.on_test_end({'loss': 0.5, 'accuracy': 0.75})
    assert re.fullmatch(f'3/3 - {TIME}s - loss: 0.5000 - accuracy: 0.7500 - {RATE}/epoch - '
                        f'{RATE}/step\n', capsys.readouterr().out)


def test_predict_bar_has_no_values(monkeypatch):
    terminal = as_terminal(monkeypatch)
    predict = CallbackList(None, add_progbar=True, model=FakeModel(), verbose=1, epochs=1,
                           steps=2)
    predict.on_predict_begin()
    for step in range(2):
        predict.on_predict_batch_end(step, {'outputs': [[1.0]]})
    predict.on_predict_end()
    last = terminal.getvalue().split('\r')[-1]
    assert re.fullmatch(f'2/2 \\[={{30}}\\] - {TIME}s {RATE}/step\n', last), last


def test_unknown_number_of_steps_is_learned_at_the_end(monkeypatch):
    terminal = as_terminal(monkeypatch)
    fit(FakeModel(), [], EPOCH_LOGS[:1], steps=None, verbose=1)
    frames = terminal.getvalue().split('\r')
    assert frames[1].startswith('      1/Unknown - ')
    assert frames[-1].startswith('2/2 [==============================] - ')


def test_verbose_0_non_chief_and_count_mode(capsys, monkeypatch):
    terminal = as_terminal(monkeypatch)
    fit(FakeModel(), [], EPOCH_LOGS, steps=3, verbose=0)
    fit(FakeModel(is_chief=False), [], EPOCH_LOGS, steps=3, verbose=1)
    fit(FakeModel(is_chief=False), [ProgbarLogger()], EPOCH_LOGS, steps=3, verbose=2)
    assert terminal.getvalue() == ''
    with pytest.raises(ValueError, match="count_mode.*'batches'"):
        ProgbarLogger(count_mode='batches')
