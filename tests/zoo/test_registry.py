"""Registered weights: fetched with no network, hash-checked, as accurate as registered;
corrupted copies are caught; concurrent fetches share one intact file."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import zoo
from zoo import registry

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONSTRUCTORS = {'resnet20': 'zoo.ResNet20(weights={name!r})',
                'alexnet_small': 'zoo.AlexNet(variant="small", weights={name!r})'}

# Runs in a fresh interpreter in which connecting anywhere fails: no network.
EVALUATE = '''
import json, socket
def refuse(*args, **kwargs):
    raise OSError('this test runs without a network')
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
import minidl, zoo
from minidl.datasets import glyphs
from zoo.training.glyphs import glyph_letters
model = {constructor}
_, (x_test, y_test) = glyph_letters()
scores = model.predict(x_test, batch_size=256)
print(json.dumps({{'accuracy': float((scores.argmax(1) == y_test).mean())}}))
'''


def run_python(code, home, timeout=240):
    env = dict(os.environ, MINIDL_HOME=str(home), PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, '-c', code], env=env, cwd=ROOT, timeout=timeout,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


# The image classifiers; the speech model has its own tests (tests/zoo/speech).
IMAGE_ENTRIES = [entry for entry in registry.entries() if entry.accuracy is not None]


def test_every_registered_file_ships_with_its_hash():
    assert {(entry.family, entry.name) for entry in registry.entries()} == \
        {('resnet20', 'glyphs'), ('alexnet_small', 'glyphs'), ('deepspeech2', 'espeak'),
         ('deepspeech2', 'open')}
    documented = {'resnet20': zoo.resnet_cifar.__doc__, 'alexnet_small': zoo.AlexNet.__doc__}
    for entry in IMAGE_ENTRIES:
        assert sha256(registry.WEIGHTS_DIR / entry.file_name) == entry.sha256
        assert entry.family in CONSTRUCTORS and (ROOT / entry.script).exists()
        # The accuracy users read in the docstring is the registered one.
        assert f'{entry.accuracy:.2%}'.replace('%', ' %') in documented[entry.family]


@pytest.mark.parametrize('entry', IMAGE_ENTRIES, ids=lambda entry: entry.family)
def test_registered_weights_load_offline_and_reach_their_accuracy(tmp_path, entry):
    constructor = CONSTRUCTORS[entry.family].format(name=entry.name)
    output = run_python(EVALUATE.format(constructor=constructor), tmp_path)
    accuracy = json.loads(output.strip().splitlines()[-1])['accuracy']
    # The registered figure was measured on this very data (the 5 unseen fonts);
    # another CPU may round a handful of borderline predictions differently.
    assert accuracy == pytest.approx(entry.accuracy, abs=0.005)
    cached = tmp_path / 'models' / entry.file_name
    assert sha256(cached) == entry.sha256


def test_a_corrupted_cache_file_is_detected_and_fetched_again():
    entry = registry.lookup('resnet20', 'glyphs')
    path = pathlib.Path(entry.fetch())
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match='does not match'):
        assert entry.fetch() == str(path)
    assert sha256(path) == entry.sha256


def test_a_corrupted_origin_is_refused(tmp_path, monkeypatch):
    entry = registry.lookup('resnet20', 'glyphs')
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    data = bytearray((registry.WEIGHTS_DIR / entry.file_name).read_bytes())
    data[100] ^= 1
    (mirror / entry.file_name).write_bytes(bytes(data))
    monkeypatch.setenv('MINIDL_ZOO_ORIGIN', mirror.as_uri())
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path / 'home'))
    with pytest.raises(ValueError, match=entry.sha256):
        zoo.ResNet20(weights='glyphs')
    assert not (tmp_path / 'home' / 'models' / entry.file_name).exists()


def test_two_processes_fetching_at_once_share_one_intact_file(tmp_path):
    code = ('from zoo import registry; '
            'print(registry.lookup("resnet20", "glyphs").fetch())')
    env = dict(os.environ, MINIDL_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    processes = [subprocess.Popen([sys.executable, '-c', code], env=env, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    outputs = [process.communicate(timeout=120) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    paths = {stdout.strip() for stdout, _ in outputs}
    assert len(paths) == 1
    entry = registry.lookup('resnet20', 'glyphs')
    assert sha256(paths.pop()) == entry.sha256
    # Nothing but the file and its lock is left in the cache.
    assert sorted(p.name for p in (tmp_path / 'models').iterdir()) == \
        [entry.file_name, entry.file_name + '.lock']


def test_a_file_of_another_architecture_is_refused(tmp_path):
    path = tmp_path / 'resnet20.h5'
    zoo.ResNet20(input_shape=(32, 32, 1), classes=52).save_weights(path)
    with pytest.raises(ValueError, match='no weights for layer'):
        zoo.AlexNet(variant='small', input_shape=(32, 32, 1), classes=52, weights=str(path))
    # Without the top, a file with the top loads (its extra layers are ignored).
    base = zoo.ResNet20(include_top=False, input_shape=(32, 32, 1), weights=str(path))
    full = zoo.ResNet20(input_shape=(32, 32, 1), classes=52, weights=str(path))
    for layer in base.layers:
        for mine, theirs in zip(layer.get_weights(), full.get_layer(layer.name).get_weights()):
            np.testing.assert_array_equal(mine, theirs)
