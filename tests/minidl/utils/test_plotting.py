"""plot_history writes a PNG with one panel per quantity."""

import sys

import numpy as np
import pytest

from minidl.utils import plot_history

HISTORY = {'loss': [1.0, 0.5, 0.25], 'accuracy': [0.5, 0.7, 0.9],
           'val_loss': [1.1, 0.6, 0.4], 'val_accuracy': [0.4, 0.6, 0.8]}


class History:
    history = HISTORY


def read_png(path):
    image = pytest.importorskip('matplotlib.image')
    return image.imread(path)


def test_history_object_or_dict_gives_a_png(tmp_path):
    pytest.importorskip('matplotlib')
    one, two = tmp_path / 'object.png', tmp_path / 'dict.png'
    assert plot_history(History(), one) == one
    plot_history(HISTORY, two)
    assert one.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    np.testing.assert_array_equal(read_png(one), read_png(two))


def test_chosen_metrics_make_a_narrower_figure(tmp_path):
    pytest.importorskip('matplotlib')
    plot_history(HISTORY, tmp_path / 'both.png')
    plot_history(HISTORY, tmp_path / 'loss.png', metrics='loss')
    both, loss = read_png(tmp_path / 'both.png'), read_png(tmp_path / 'loss.png')
    assert both.shape[1] == 2 * loss.shape[1] and both.shape[0] == loss.shape[0]


def test_unknown_metrics_and_empty_histories_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"\['mae'\] not in the history"):
        plot_history(HISTORY, tmp_path / 'x.png', metrics=['loss', 'mae'])
    with pytest.raises(ValueError, match='nothing to plot'):
        plot_history({}, tmp_path / 'x.png')
    with pytest.raises(ValueError, match='a History or a dict'):
        plot_history([1, 2], tmp_path / 'x.png')


def test_missing_matplotlib_raises_an_import_error_with_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'matplotlib.figure', None)
    with pytest.raises(ImportError, match=r'pip install minidl\[plot\]'):
        plot_history(HISTORY, tmp_path / 'x.png')
