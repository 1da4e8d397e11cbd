"""Progbar prints what Keras 2.2.4's ``keras.utils.generic_utils.Progbar`` prints.

Every expected string below is worked out by hand from Keras 2.2.4's
``Progbar.update``: the bar is ``'%{digits}d/{target} ['`` then
``int(width * current / target)`` cells (the last one '>' until the target),
dots for the rest and ']'; before the target the info is ``' - ETA: '``
(``%ds``, ``%d:%02d`` above a minute), at the target ``' - %.0fs'`` and the
time per step; each value is averaged over the steps it covered. The clock is
replaced so that the times are exact.
"""

import io

import pytest

from minidl.utils import Progbar as UtilsProgbar
from minidl.utils import progbar as progbar_module
from minidl.utils.generic_utils import Progbar


class _Clock:
    """Stands in for the ``time`` module: ``time()`` returns the value set."""

    def __init__(self, now):
        self.now = now

    def time(self):
        return self.now


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def clock(monkeypatch):
    fake = _Clock(100.0)
    monkeypatch.setattr(progbar_module, 'time', fake)
    return fake


def test_keras_paths():
    assert Progbar is UtilsProgbar


def test_bar_in_a_file_averages_values_and_skips_early_redraws(clock, capsys):
    bar = Progbar(target=10)  # width 30, verbose 1, interval 0.05
    clock.now = 101.5
    bar.update(3, [('loss', 0.5)])
    # 1.5 s / 3 steps = 0.5 s per step; 7 left: ETA 3.5 s, printed '%ds' -> 3s.
    # int(30 * 3 / 10) = 9 cells: 8 '=' and '>', then 21 dots. Not a terminal:
    # each draw starts on a new line.
    first = '\n 3/10 [========>.....................] - ETA: 3s - loss: 0.5000'
    assert capsys.readouterr().out == first
    clock.now = 101.52
    bar.update(5, [('loss', 0.3)])  # 0.02 s after the last draw: not drawn
    assert capsys.readouterr().out == ''
    clock.now = 104.0
    bar.update(10, [('loss', 0.1), ('acc', 0.9)])
    # loss: (0.5 * 3 + 0.3 * 2 + 0.1 * 5) / 10 = 0.26; acc: 0.9 * 5 / 5.
    # 4 s in all, 0.4 s per step -> '400ms/step'.
    last = ('\n10/10 [==============================] - 4s 400ms/step - loss: 0.2600'
            ' - acc: 0.9000\n')
    assert capsys.readouterr().out == last


def test_bar_on_a_terminal_redraws_in_place_and_blanks_the_rest(clock, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr('sys.stdout', terminal)
    bar = Progbar(target=128)
    clock.now = 102.0
    bar.update(1)
    # 2 s per step, 127 left: 254 s -> '4:14'. int(30 / 128) = 0 cells.
    first = '\r  1/128 [..............................] - ETA: 4:14'
    assert terminal.getvalue() == first
    clock.now = 108.0
    bar.update(64)
    # 8 s / 64 = 0.125 s per step, 64 left: '8s'. 15 cells. The line is 50
    # characters, 2 fewer than the 52 before: 2 spaces blank them out.
    second = ('\b' * 52 + '\r 64/128 [==============>...............] - ETA: 8s' + '  ')
    assert terminal.getvalue() == first + second
    clock.now = 116.0
    bar.update(128)
    third = '\b' * 50 + '\r128/128 [' + '=' * 30 + '] - 16s 125ms/step\n'
    assert terminal.getvalue() == first + second + third


def test_unknown_target_and_stateful_metrics(clock, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr('sys.stdout', terminal)
    bar = Progbar(target=None, stateful_metrics=['lr'])
    clock.now = 100.25
    bar.update(1, [('lr', 0.001), ('loss', 2.0)])
    # No target: always drawn, '%7d/Unknown', the elapsed time and time per step;
    # |0.001| is not above 1e-3, so it takes the exponent format.
    first = '\r      1/Unknown - 0s 250ms/step - lr: 1.0000e-03 - loss: 2.0000'
    assert terminal.getvalue() == first
    clock.now = 100.5
    bar.update(2, [('lr', 0.0005), ('loss', 1.0)])
    # lr is shown as given; loss is averaged: (2 + 1) / 2.
    second = '\b' * len(first[1:]) + '\r      2/Unknown - 0s 250ms/step - lr: 5.0000e-04' \
        ' - loss: 1.5000'
    assert terminal.getvalue() == first + second


def test_verbose_2_prints_one_line_at_the_target(clock, capsys):
    bar = Progbar(target=4, verbose=2)
    bar.update(2, [('loss', -0.5)])
    assert capsys.readouterr().out == ''
    clock.now = 103.0
    bar.add(2, [('loss', -0.5)])
    # Keras 2.2.4's verbose=2 line tests 'average > 1e-3' without abs(), so a
    # negative average takes the exponent format there.
    assert capsys.readouterr().out == ' - 3s - loss: -5.0000e-01\n'


def test_verbose_0_prints_nothing(clock, capsys):
    bar = Progbar(target=3, verbose=0)
    for step in range(1, 4):
        bar.update(step, [('loss', 1.0)])
    assert capsys.readouterr().out == ''
