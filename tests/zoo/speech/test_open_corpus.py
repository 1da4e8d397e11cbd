"""The open-vocabulary corpus: held-out words never in training texts, seeded utterances,
shards that resume, and the augmentation."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from zoo.speech import augment, corpus, open_corpus, voices, words
from zoo.speech.alphabet import ENGLISH
from zoo.speech.texts import VOCABULARY

needs_espeak = pytest.mark.skipif(shutil.which('espeak-ng') is None,
                                  reason='espeak-ng is not installed')
needs_wordlist = pytest.mark.skipif(not os.path.exists(words.WORDLIST_PATH),
                                    reason='wamerican is not installed')

# A made-up list: every pronounceable 4-letter word of these syllables.
TINY = words.filter_words([a + b for a in ('ba', 'do', 'ki', 'lu', 'me', 'no', 'pa', 'ri', 'so',
                                           'tu', 'vi', 'wo', 'ze', 'ga', 'fe')
                           for b in ('ba', 'do', 'ki', 'lu', 'me', 'no', 'pa', 'ri', 'so', 'tu',
                                     'vi', 'wo', 'ze', 'ga', 'fe')] + ['Capital', "it's", 'x'])


def test_the_word_list_is_filtered_and_its_digest_checked():
    assert 'Capital' not in TINY and "it's" not in TINY and 'x' not in TINY
    assert len(TINY) == 225 and TINY == sorted(TINY)
    with pytest.raises(RuntimeError, match='wamerican 2020.12.07-2'):
        words.check_words(TINY)
    words.check_words(TINY, expected=words.words_digest(TINY))


def test_held_out_words_are_a_rule_of_the_word_and_never_training_words():
    training, held_out = words.split_words(TINY)
    assert held_out and not set(held_out) & set(training)
    assert set(TINY) <= set(training) | set(held_out)
    # The same word is held out whatever list it is in.
    assert words.split_words(TINY[::3])[1] == [w for w in held_out if w in TINY[::3]]
    protected = set(words.COMMON_WORDS) | set(VOCABULARY)
    assert protected <= set(training)
    for phrase in words.EVERYDAY_PHRASES:
        assert set(phrase.split()) <= set(words.COMMON_WORDS)
    assert len(words.EVERYDAY_PHRASES) == 11 and 'hello world' in words.EVERYDAY_PHRASES
    # The check phrases are training words too, and another set.
    assert not set(words.CHECK_PHRASES) & set(words.EVERYDAY_PHRASES)
    for phrase in words.CHECK_PHRASES:
        assert not any(words.is_held_out(word) for word in phrase.split()), phrase


@needs_wordlist
def test_the_installed_wamerican_is_the_designed_list():
    vocabulary = open_corpus.Vocabulary()  # checks the digest
    assert (len(vocabulary.training), len(vocabulary.held_out)) == (56891, 6365)


def test_training_texts_never_say_a_held_out_word():
    vocabulary = open_corpus.Vocabulary(TINY)
    rng = np.random.default_rng(0)
    train = [open_corpus.draw_open_text(rng, 'train', vocabulary) for _ in range(2000)]
    test = [open_corpus.draw_open_text(rng, 'test', vocabulary) for _ in range(300)]
    said = {word for text in train for word in text.split()}
    assert not said & set(vocabulary.held_out)
    assert {word for text in test for word in text.split()} <= set(vocabulary.held_out)
    assert said & set(words.COMMON_WORDS) and said & (set(TINY) - set(words.COMMON_WORDS))
    for text in train + test:
        ENGLISH.encode(text)


@needs_espeak
def test_utterances_are_seeded_and_shards_resume(tmp_path):
    vocabulary = open_corpus.Vocabulary(TINY)
    text, voice, wave = open_corpus.utterance('train', 3, vocabulary, seed=5)
    again = open_corpus.utterance('train', 3, vocabulary, seed=5)
    assert (text, voice) == again[:2] and np.array_equal(wave, again[2])
    assert open_corpus.utterance('test', 3, vocabulary, seed=5)[1].split('+')[1] in (
        open_corpus.VARIANTS['test'])
    paths = open_corpus.generate('train', 5, seed=5, directory=tmp_path, vocabulary=vocabulary,
                                 shard=2)
    assert [os.path.basename(p)[-13:] for p in paths] == ['0000000-2.npz', '0000002-2.npz',
                                                          '0000004-1.npz']
    whole = open_corpus.load(paths)
    os.remove(paths[1])  # as if generation had stopped there
    resumed = open_corpus.load(open_corpus.generate('train', 5, seed=5, directory=tmp_path,
                                                    vocabulary=vocabulary, shard=2))
    assert resumed.transcripts == whole.transcripts and whole.transcripts[3] == text
    for first, second in zip(whole.features, resumed.features):
        np.testing.assert_array_equal(first, second)


@needs_espeak
def test_another_splits_voices_say_the_same_texts_with_the_same_draws():
    vocabulary = open_corpus.Vocabulary(TINY)
    for index in range(6):
        text, voice, _ = open_corpus.utterance('test', index, vocabulary, seed=5)
        said, by, _ = open_corpus.utterance('test', index, vocabulary, seed=5, voices='train')
        assert said == text and by.split('+')[0] == voice.split('+')[0]  # the same accent draw
        assert voices.split_of(voice) == 'test' and voices.split_of(by) == 'train'
    with pytest.raises(ValueError, match='voices must be one of'):
        open_corpus.utterance('test', 0, vocabulary, voices='nobody')


@needs_espeak
def test_every_accent_speaks_each_variant_in_a_voice_of_its_own():
    def wave(voice):
        return corpus.speak('see you tomorrow', voice, 175, 50).tobytes()

    for accent in voices.ACCENTS:
        said = {wave(voices.voice_name(accent, variant)) for variant in (voices.PLAIN, 'f3', 'm1')}
        assert len(said) == 3, accent
    # Why version 1's accents are kept apart: after 'en-gb' espeak-ng drops the variant.
    assert wave('en-gb+f3') == wave('en-gb') == wave('en')


@needs_espeak
def test_plain_voices_speak_some_training_utterances_and_no_test_one():
    assert voices.split_of('en') == voices.split_of('en+m1') == 'train'
    vocabulary = open_corpus.Vocabulary(TINY)
    said = [open_corpus.utterance(split, i, vocabulary, seed=3)[1]
            for split in ('train', 'test') for i in range(40)]
    plain = [voices.variant_of(voice) == voices.PLAIN for voice in said]
    assert 0 < sum(plain[:40]) < 20 and not any(plain[40:])  # PLAIN_SHARE of training's


def test_augmentation_is_seeded_and_can_stay_clean_or_go_narrowband():
    rate = 22050
    # Silence, then a 6 kHz tone: a room's echo comes after the sound, so the
    # silence stays (near) zero unless noise is added.
    wave = np.concatenate([np.zeros(2000), np.sin(2 * np.pi * 6000 * np.arange(rate) / rate)])
    first = augment.augment(wave, rate, np.random.default_rng(3))
    assert np.array_equal(first, augment.augment(wave, rate, np.random.default_rng(3)))
    assert first.shape == wave.shape and np.abs(first).max() == pytest.approx(1.0)
    outcomes = set()
    for seed in range(60):
        out = augment.augment(wave, rate, np.random.default_rng(seed))
        clean = bool(np.abs(out[:1500]).max() < 1e-6)
        spectrum = np.abs(np.fft.rfft(out[2000:]))
        tone = spectrum[5900:6100].max() / spectrum.max()
        outcomes.add((clean, bool(tone < 0.01)))  # the tone gone: an 8 kHz channel
    assert {(True, False), (False, True), (False, False)} <= outcomes


def test_the_readme_names_the_everyday_phrases():
    readme = ' '.join((Path(__file__).resolve().parents[3] / 'README.md').read_text().split())
    for phrase in words.EVERYDAY_PHRASES:
        assert f'"{phrase}"' in readme


def test_everyday_sentences_are_an_option_that_leaves_the_recipes_texts_alone(tmp_path):
    vocabulary = open_corpus.Vocabulary(TINY)
    everyday = ('have a nice day', 'what time is it')

    def texts(**options):
        rng = np.random.default_rng(7)
        return [open_corpus.draw_open_text(rng, 'train', vocabulary, **options)
                for _ in range(2000)]

    plain, none, mixed = texts(), texts(everyday=()), texts(everyday=everyday)
    assert plain == none  # no everyday sentences: not even a draw for them
    share = sum(text in everyday for text in mixed) / len(mixed)
    assert abs(share - open_corpus.EVERYDAY_PROBABILITY) < 0.03, share
    assert not any(text in everyday for text in plain)
    names = [os.path.basename(open_corpus.shard_path(tmp_path, 'train', 0, 0, 500, e))
             for e in ((), everyday)]
    assert names == ['open-train-seed0-v2-0000000-500.npz',
                     'open-train-seed0-v2-everyday2-0000000-500.npz']
    with pytest.raises(ValueError, match='training texts'):
        open_corpus.generate('test', 1, directory=tmp_path, vocabulary=vocabulary,
                             everyday=everyday)


def test_the_everyday_share_is_a_parameter_named_in_the_shards_unless_the_recipes(tmp_path):
    vocabulary = open_corpus.Vocabulary(TINY)
    everyday = ('have a nice day', 'what time is it')
    rng = np.random.default_rng(7)
    mixed = [open_corpus.draw_open_text(rng, 'train', vocabulary, everyday, everyday_share=0.3)
             for _ in range(2000)]
    share = sum(text in everyday for text in mixed) / len(mixed)
    assert abs(share - 0.3) < 0.03, share
    names = [os.path.basename(open_corpus.shard_path(tmp_path, 'train', 0, 0, 500, everyday, s))
             for s in (open_corpus.EVERYDAY_PROBABILITY, 0.3)]
    assert names == ['open-train-seed0-v2-everyday2-0000000-500.npz',
                     'open-train-seed0-v2-everyday2-share30-0000000-500.npz']
    with pytest.raises(ValueError, match='probability'):
        open_corpus.generate('train', 1, directory=tmp_path, vocabulary=vocabulary,
                             everyday=everyday, everyday_share=1.5)
