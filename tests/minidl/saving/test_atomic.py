"""Atomic saving: a failure at any point leaves the previous file intact and no debris."""

import os

import pytest

from minidl import layers, models
from minidl.saving import hdf5, load_model, weights as weights_module
from tests.minidl.saving.builders import assert_same_bits, fresh


@pytest.fixture
def model():
    fresh()
    model = models.Sequential([layers.Dense(4, input_shape=(3,)), layers.Dense(2)])
    model.compile('sgd', 'mse')
    return model


class Crash(Exception):
    pass


def crash(*args, **kwargs):
    raise Crash('simulated failure')


@pytest.mark.parametrize('where', ['write_arrays', 'fsync', 'replace', 'interrupt'])
def test_a_failure_mid_save_keeps_the_old_file(model, tmp_path, monkeypatch, where):
    path = tmp_path / 'model.h5'
    model.save(path)
    before = path.read_bytes()
    model.layers[0].set_weights([w + 1 for w in model.layers[0].get_weights()])
    if where == 'write_arrays':  # fails after the first layer's datasets are written
        calls = []
        original = weights_module.write_arrays

        def write_then_crash(group, arrays):
            calls.append(group.name)
            if len(calls) == 2:
                raise Crash('simulated failure')
            original(group, arrays)
        monkeypatch.setattr(weights_module, 'write_arrays', write_then_crash)
    elif where == 'interrupt':
        def interrupt(*args, **kwargs):
            raise KeyboardInterrupt
        monkeypatch.setattr(hdf5.os, 'replace', interrupt)
    else:
        monkeypatch.setattr(hdf5.os, where, crash)
    with pytest.raises((Crash, KeyboardInterrupt)):
        model.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ['model.h5']
    assert_same_bits(load_model(path).get_weights()[2:], model.get_weights()[2:])


def test_the_file_is_synced_before_it_replaces_the_old_one(model, tmp_path, monkeypatch):
    events = []
    fsync, replace = os.fsync, os.replace

    def record_fsync(descriptor):
        events.append(('fsync', os.path.basename(os.readlink(f'/proc/self/fd/{descriptor}'))))
        fsync(descriptor)

    def record_replace(source, target):
        events.append(('replace', os.path.basename(source), os.path.basename(target)))
        replace(source, target)
    monkeypatch.setattr(hdf5.os, 'fsync', record_fsync)
    monkeypatch.setattr(hdf5.os, 'replace', record_replace)
    model.save_weights(tmp_path / 'weights.h5')
    temporary = events[0][1]
    assert temporary.startswith('.weights.h5.') and temporary.endswith('.tmp')
    assert events[:2] == [('fsync', temporary), ('replace', temporary, 'weights.h5')]
    assert os.listdir(tmp_path) == ['weights.h5']


def test_a_new_file_gets_ordinary_permissions(model, tmp_path):
    mask = os.umask(0o022)
    try:
        model.save(tmp_path / 'model.h5')
    finally:
        os.umask(mask)
    assert (tmp_path / 'model.h5').stat().st_mode & 0o777 == 0o644
