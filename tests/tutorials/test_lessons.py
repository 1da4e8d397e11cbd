"""The tutorials run as written; lesson 1 is ``make demo``."""

import importlib.util
import pathlib

import pytest

TUTORIALS = pathlib.Path(__file__).resolve().parents[2] / 'tutorials'


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TUTORIALS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lesson_1_trains_saves_and_plots(tmp_path, capsys):
    pytest.importorskip('sklearn')
    pytest.importorskip('matplotlib')
    accuracy = _load('01_lenet_digits').main(tmp_path)
    assert accuracy >= 0.95
    assert (tmp_path / 'lenet_digits.h5').stat().st_size > 0
    assert (tmp_path / 'lenet_digits_curves.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    output = capsys.readouterr().out
    assert 'Total params: 13,706' in output  # 160 + 4,640 + 8,256 + 650
    assert 'predicts the same bits: True' in output
