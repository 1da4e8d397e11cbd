"""The registered open-vocabulary Deep Speech 2 ('open'): its weights and language model
ship hash-checked, load offline, and transcribe held-out voices saying held-out words
with the error rates measured on corpus version 2's test split."""

import gzip
import hashlib
import json
import os

import numpy as np
import pytest

from zoo import registry
from zoo.speech import everyday_texts, open_corpus, pretrained, voices, words, wordnet_examples
from zoo.speech.language_model import CharNgramModel
from zoo.training import speech_open
from zoo.training.speech import CONFIG
from tests.zoo.test_registry import ROOT, run_python

ENTRY = registry.lookup('deepspeech2', 'open')

# Measured on the shipped sample (open_corpus.load_sample(): corpus version 2's test split's
# first 150 utterances, float16 mantissas cut to 8 bits) by EVALUATE; the registry's figures
# are the recipe's, on all 500 test utterances.
SAMPLE_RATES = {'greedy': [0.1818, 0.7742], 'beam+lm': [0.1604, 0.6425]}  # [CER, WER]

# A fresh interpreter in which connecting anywhere fails: no network.
EVALUATE = '''
import json, socket
def refuse(*args, **kwargs):
    raise OSError('this test runs without a network')
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
from zoo.speech import everyday_texts, open_corpus, pretrained, voices, words
from zoo.speech.metrics import cer, wer
from zoo.speech.transcribe import transcribe
sample = open_corpus.load_sample()
rates = {}
for name, options in (('greedy', {}), ('beam+lm', dict(pretrained.DECODER,
                                                         lm=pretrained.language_model()))):
    texts = transcribe(pretrained.model(), sample.features, **options)
    rates[name] = [cer(sample.transcripts, texts), wer(sample.transcripts, texts)]
print(json.dumps(rates))
'''


def test_transcribe_uses_the_open_weights_and_their_language_model():
    assert (pretrained.FAMILY, pretrained.WEIGHTS) == ('deepspeech2', 'open')
    for name, digest in ((ENTRY.file_name, ENTRY.sha256),
                         (ENTRY.language_model, ENTRY.language_model_sha256)):
        path = registry.WEIGHTS_DIR / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert (ROOT / ENTRY.script).exists()
    assert ENTRY.config == CONFIG  # the recipe's architecture, the constructor's default
    # The language model helps, as the README says.
    assert ENTRY.cer_with_lm < ENTRY.cer and ENTRY.wer_with_lm < ENTRY.wer
    readme = (ROOT / 'README.md').read_text()
    for rate in (ENTRY.cer, ENTRY.cer_with_lm, ENTRY.wer, ENTRY.wer_with_lm):
        assert f'{rate:.1%}'.replace('%', ' %') in readme


def test_registered_weights_load_offline_and_reach_their_error_rates(tmp_path):
    output = run_python(EVALUATE, tmp_path, timeout=600)
    rates = json.loads(output.strip().splitlines()[-1])
    for name, expected in SAMPLE_RATES.items():
        # Another CPU may round a few borderline frames differently.
        assert rates[name] == pytest.approx(expected, abs=0.01), name
    for name in (ENTRY.file_name, ENTRY.language_model):
        cached = tmp_path / 'models' / name
        assert cached.exists()


def test_the_shipped_language_model_is_the_recipes():
    # Counted again from the recipe's training texts (needs the word list, Debian's
    # fortunes and WordNet), it must be the file's model: the same counts, so the same scores.
    if not os.path.isdir(everyday_texts.DIRECTORY):
        pytest.skip('Debian\'s fortunes is not installed (apt-get install fortunes)')
    if not os.path.isdir(wordnet_examples.DIRECTORY):
        pytest.skip('WordNet is not installed (apt-get install wordnet-base)')
    if not os.path.exists(words.WORDLIST_PATH):
        pytest.skip('the word list is not installed (apt-get install wamerican)')
    vocabulary = open_corpus.Vocabulary()
    recounted = speech_open.language_model(vocabulary, speech_open.more_everyday_english())
    path = registry.WEIGHTS_DIR / ENTRY.language_model
    shipped = CharNgramModel.from_json(gzip.decompress(path.read_bytes()).decode('utf-8'))
    assert shipped.to_json() == recounted.to_json()


def test_the_sample_is_held_out_voices_saying_held_out_words():
    sample = open_corpus.load_sample()
    assert len(sample.features) == open_corpus.SAMPLE_COUNT
    assert {voices.split_of(voice) for voice in sample.voices} == {'test'}
    # Corpus version 2's accents: none of them speaks every variant with the plain voice.
    assert {voice.split('+')[0] for voice in sample.voices} == set(voices.ACCENTS)
    if not os.path.exists(words.WORDLIST_PATH):
        pytest.skip('the word list is not installed (apt-get install wamerican)')
    training = set(open_corpus.Vocabulary().training)
    assert not {word for text in sample.transcripts for word in text.split()} & training


def test_a_candidate_file_loads_into_the_registered_architecture(tmp_path):
    pytest.importorskip('h5py')
    registered = pretrained.model()
    registered.save_weights(tmp_path / 'candidate.h5')
    candidate = pretrained.model_from_file(tmp_path / 'candidate.h5')
    assert candidate is not registered and candidate.count_params() == 1408669
    for mine, theirs in zip(candidate.get_weights(), registered.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    # A file of another width does not fit: said, not loaded half-way.
    with pytest.raises(ValueError):
        pretrained.model_from_file(tmp_path / 'candidate.h5', units=64)
