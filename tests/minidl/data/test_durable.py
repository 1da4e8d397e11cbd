"""Durable writes (minidl.data.durable.replacing) and the writers built on it: downloads
(get_file) and safetensors files. A write replaces its target whole or not at all; a
writer killed mid-write leaves a temporary that the next write of the same target
removes, while a live writer's temporary is left alone."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from minidl.data import durable
from minidl.utils import get_file
from zoo.convert import read_safetensors, save_safetensors

ROOT = pathlib.Path(__file__).resolve().parents[3]

# Writes into replacing(target) and then dies (kill -9 style) or waits, inside the block.
WRITER = '''
import os, sys, time
from minidl.data import durable
with durable.replacing(sys.argv[1]) as file:
    file.write(b'half of a new file')
    file.flush()
    if sys.argv[2] == 'die':
        os._exit(9)
    print('writing', flush=True)
    time.sleep(60)
'''


def temporaries(target):
    return sorted(p.name for p in target.parent.glob(f'.{target.name}.*.tmp'))


def killed_writer(target):
    """A temporary of ``target`` whose writer died mid-write."""
    done = subprocess.run([sys.executable, '-c', WRITER, str(target), 'die'], cwd=ROOT)
    assert done.returncode == 9
    assert len(temporaries(target)) == 1
    return temporaries(target)[0]


def test_a_write_replaces_the_target_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / 'file.bin'
    target.write_bytes(b'old')
    with durable.replacing(target) as file:
        file.write(b'new')
        assert target.read_bytes() == b'old'  # untouched until the block ends
    assert target.read_bytes() == b'new' and temporaries(target) == []


def test_an_error_or_ctrl_c_in_the_block_keeps_the_old_file(tmp_path):
    target = tmp_path / 'file.bin'
    target.write_bytes(b'old')
    for error in (ValueError('hash does not match'), KeyboardInterrupt()):
        with pytest.raises(type(error)):
            with durable.replacing(target) as file:
                file.write(b'partial')
                raise error
        assert target.read_bytes() == b'old' and temporaries(target) == []


def test_ctrl_c_right_after_the_rename_leaves_the_new_file(tmp_path, monkeypatch):
    target = tmp_path / 'file.bin'
    target.write_bytes(b'old')

    def interrupted(directory):
        raise KeyboardInterrupt  # arrives after os.replace, before the directory's fsync
    monkeypatch.setattr(durable, 'sync_directory', interrupted)
    with pytest.raises(KeyboardInterrupt):
        with durable.replacing(target) as file:
            file.write(b'new')
    assert target.read_bytes() == b'new' and temporaries(target) == []


def test_a_killed_writers_temporary_goes_and_a_live_writers_stays(tmp_path):
    target = tmp_path / 'file.bin'
    abandoned = killed_writer(target)
    live = subprocess.Popen([sys.executable, '-c', WRITER, str(target), 'wait'], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert live.stdout.readline() == 'writing\n'
        held = [name for name in temporaries(target) if name != abandoned]
        with durable.replacing(target) as file:
            file.write(b'mine')
        assert target.read_bytes() == b'mine'
        assert temporaries(target) == held  # the abandoned one went; the live one stayed
    finally:
        live.kill()
        live.wait()


def test_get_file_removes_what_a_killed_download_left(tmp_path):
    origin = tmp_path / 'origin.bin'
    origin.write_bytes(b'payload')
    target = tmp_path / 'cache' / 'datasets' / 'data.bin'
    target.parent.mkdir(parents=True)
    killed_writer(target)
    path = get_file('data.bin', origin.as_uri(), cache_dir=tmp_path / 'cache')
    assert pathlib.Path(path).read_bytes() == b'payload' and temporaries(target) == []


def test_save_safetensors_removes_what_a_killed_save_left(tmp_path):
    target = tmp_path / 'model.safetensors'
    killed_writer(target)
    save_safetensors({'w': np.arange(3, dtype=np.float32)}, target)
    np.testing.assert_array_equal(read_safetensors(target)[0]['w'], np.arange(3))
    assert temporaries(target) == []


def test_a_failed_download_keeps_the_cached_file(tmp_path):
    origin = tmp_path / 'origin.bin'
    origin.write_bytes(b'new payload')
    cache = tmp_path / 'cache' / 'datasets'
    cache.mkdir(parents=True)
    (cache / 'data.bin').write_bytes(b'old payload')
    with pytest.warns(UserWarning, match='does not match'), pytest.raises(ValueError,
                                                                          match='not saved'):
        get_file('data.bin', origin.as_uri(), file_hash='0' * 64, cache_dir=tmp_path / 'cache')
    assert (cache / 'data.bin').read_bytes() == b'old payload'
    assert temporaries(cache / 'data.bin') == []
