"""The registered Deep Speech 2: loads offline, hash-checked, and transcribes the held-out
voices with the error rates its registry entry and docstring state."""

import hashlib
import inspect
import json

import pytest

import zoo
from zoo import registry
from zoo.speech import deepspeech
from zoo.training.speech import CONFIG
from tests.zoo.test_registry import ROOT, run_python

ENTRY = registry.lookup('deepspeech2', 'espeak')

# A fresh interpreter in which connecting anywhere fails: no network.
EVALUATE = '''
import json, socket
def refuse(*args, **kwargs):
    raise OSError('this test runs without a network')
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
import zoo
from zoo.speech import corpus
from zoo.training.speech import error_rates, language_model
model = zoo.DeepSpeech2(weights='espeak')
greedy, with_lm = error_rates(model, corpus.load_sample('test'), language_model())
print(json.dumps({'cer': greedy, 'cer_with_lm': with_lm}))
'''


def test_the_entry_ships_with_its_hash_and_documented_error_rates():
    path = registry.WEIGHTS_DIR / ENTRY.file_name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == ENTRY.sha256
    assert (ROOT / ENTRY.script).exists()
    # The recipe's architecture is the constructor's default one.
    assert ENTRY.config == CONFIG
    defaults = inspect.signature(zoo.DeepSpeech2).parameters
    assert all(defaults[key].default == value for key, value in CONFIG.items())
    for rate in (ENTRY.cer, ENTRY.cer_with_lm):
        assert f'{rate:.2%}'.replace('%', ' %') in deepspeech.__doc__
    # The language model helps, as the README says.
    assert ENTRY.cer_with_lm < ENTRY.cer


def test_registered_weights_load_offline_and_reach_their_error_rates(tmp_path):
    output = run_python(EVALUATE, tmp_path, timeout=600)
    rates = json.loads(output.strip().splitlines()[-1])
    # Measured on this very data (the shipped held-out voices); another CPU may round
    # a few borderline frames differently.
    assert rates['cer'] == pytest.approx(ENTRY.cer, abs=0.005)
    assert rates['cer_with_lm'] == pytest.approx(ENTRY.cer_with_lm, abs=0.005)
    cached = tmp_path / 'models' / ENTRY.file_name
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == ENTRY.sha256


def test_registered_weights_need_their_architecture():
    with pytest.raises(ValueError, match='units=64 .theirs: 160'):
        zoo.DeepSpeech2(units=64, weights='espeak')
    with pytest.raises(ValueError, match="registered name .espeak."):
        zoo.DeepSpeech2(weights='imagenet')
