import os
import shutil

import numpy as np
import pytest

from zoo.speech import corpus, texts, voices
from zoo.speech.alphabet import ENGLISH

needs_espeak = pytest.mark.skipif(shutil.which('espeak-ng') is None,
                                  reason='espeak-ng is not installed')


def _training_texts(count=3000):
    rng = np.random.default_rng(7)
    return [texts.draw_text(rng)[1] for _ in range(count)] + texts.lm_texts(count, seed=3)


def test_texts_use_only_the_alphabet():
    rng = np.random.default_rng(1)
    transfer = [texts.draw_text(rng, 'transfer')[1] for _ in range(300)]
    for text in _training_texts() + transfer:
        assert ENGLISH.normalize(text) == text
        ENGLISH.encode(text)  # raises on a character outside the alphabet


def test_transfer_words_are_never_in_training_texts():
    assert set(texts.TRANSFER_WORDS).isdisjoint(texts.VOCABULARY)
    said = {word for text in _training_texts() for word in text.split()}
    assert said <= set(texts.VOCABULARY)
    assert said.isdisjoint(texts.TRANSFER_WORDS)
    # Every kind and every template word actually occurs.
    assert {'zero', 'nine', 'stop', 'alarm', "o'clock"} <= said
    assert 120 <= len(texts.VOCABULARY) <= 180 and len(texts.TRANSFER_WORDS) >= 30


def test_lm_texts_are_seeded_and_differ_from_split_streams():
    assert texts.lm_texts(50, seed=4) == texts.lm_texts(50, seed=4)
    assert texts.lm_texts(50, seed=4) != texts.lm_texts(50, seed=5)


def test_variant_lists_are_disjoint_and_sized():
    test, transfer, train = (set(voices.VARIANTS[s]) for s in ('test', 'transfer', 'train'))
    assert len(test) == len(voices.VARIANTS['test']) == 12 and len(transfer) == 12
    assert not (test & transfer) and not (test & train) and not (transfer & train)
    assert len(train) >= 70


def test_missing_espeak_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(voices.shutil, 'which', lambda name: None)
    with pytest.raises(RuntimeError, match='apt-get install espeak-ng'):
        corpus.generate('test', 2, directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('name', ['test', 'train'])
def test_shipped_sample_is_consistent(name):
    sample = corpus.load_sample(name)
    assert len(sample) == corpus.SAMPLE_COUNT == len(sample.features) == len(sample.voices)
    assert len(sample.durations) == len(sample)
    for frames, transcript, voice, duration in zip(sample.features, sample.transcripts,
                                                   sample.voices, sample.durations):
        assert frames.dtype == np.float32 and frames.shape[1] == corpus.BINS
        # 10 ms hop, 20 ms window: frames = 1 + (samples - 441) // 220.
        assert frames.shape[0] == 1 + (round(duration * corpus.RATE) - 441) // 220
        assert len(ENGLISH.encode(transcript)) > 0
        accent, variant = voice.split('+')
        assert accent in voices.ACCENTS_V1 and variant in voices.VARIANTS[name]
    assert len(set(sample.transcripts)) > 100 and len(set(sample.voices)) > 20


def test_shipped_samples_share_no_variant():
    test = {voices.variant_of(v) for v in corpus.load_sample('test').voices}
    train = {voices.variant_of(v) for v in corpus.load_sample('train').voices}
    assert test.isdisjoint(train)
    assert test <= set(voices.VARIANTS['test'])


def test_shipped_waves_match_their_transcripts():
    from zoo.speech.features import features

    waves = corpus.load_sample_waves()
    assert len(waves) == 3
    test = corpus.load_sample('test')
    for (wave, rate, transcript, voice), index in zip(waves, (0, 1, 3)):
        assert wave.dtype == np.int16 and wave.ndim == 1 and rate == corpus.RATE
        assert (transcript, voice) == (test.transcripts[index], test.voices[index])
        # int16 rounding moves the quietest bins a little; another utterance differs by ~1.
        np.testing.assert_allclose(features(wave, rate), test.features[index], atol=0.1)


@needs_espeak
def test_generation_is_bit_identical_and_per_index(tmp_path):
    first = corpus.build('test', 3, seed=11)
    again = corpus.build('test', 3, seed=11)
    for key in first:
        np.testing.assert_array_equal(first[key], again[key])
    # Utterance 2 is the same whatever count is asked for.
    alone = corpus.build('test', 1, seed=11, start=2)
    np.testing.assert_array_equal(alone['features'],
                                  first['features'][first['offsets'][2]:first['offsets'][3]])
    assert alone['transcripts'][0] == first['transcripts'][2]
    assert not np.array_equal(corpus.build('test', 1, seed=12)['features'],
                              first['features'][:first['offsets'][1]])


@needs_espeak
def test_generate_caches_and_loads(tmp_path):
    path = corpus.generate('transfer', 2, seed=1, vocabulary='transfer', directory=tmp_path)
    stamp = os.stat(path).st_mtime_ns
    assert corpus.generate('transfer', 2, seed=1, vocabulary='transfer',
                           directory=tmp_path) == path
    assert os.stat(path).st_mtime_ns == stamp  # reused, not rewritten
    loaded = corpus.load(path)
    assert len(loaded) == 2
    for transcript, voice in zip(loaded.transcripts, loaded.voices):
        assert set(transcript.split()) <= set(texts.TRANSFER_WORDS)
        assert voices.split_of(voice) == 'transfer'


@needs_espeak
def test_installed_espeak_has_every_listed_variant():
    voices.check_installed_variants()
