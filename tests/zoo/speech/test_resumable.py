"""Checkpointed training: a run stopped after any epoch and resumed gives the same bits as one
that never stopped (tiny Deep Speech 2, synthetic features), and the open recipe's pieces."""

import numpy as np
import pytest

import minidl
from minidl.optimizers import Adam

import zoo
from zoo.speech.batches import SpeechBatches
from zoo.training import speech, speech_open
from zoo.training.digest import file_digest
from zoo.training.resumable import KEEP, checkpoints, fit_resumable


def _batches():
    rng = np.random.default_rng(0)
    features = [rng.standard_normal((int(n), 8)).astype(np.float32)
                for n in rng.integers(20, 40, 12)]
    return SpeechBatches(features, ['ab', 'ba c', 'cab', 'a'] * 3, batch_size=4)


def _build():
    minidl.set_seed(3)
    model = zoo.speech.DeepSpeech2(input_dim=8, filters=2, rnn_layers=2, units=6)
    model.compile(Adam(1e-2, clipnorm=5.0), loss='ctc')
    return model


def _schedule(epoch):
    return 1e-2 * 0.5 ** epoch


def test_a_resumed_run_writes_the_same_bits_as_an_uninterrupted_one(tmp_path):
    straight, done = fit_resumable(_build, _batches(), 3, tmp_path / 'straight', _schedule, 0)
    assert done == 0
    # The same run stopped after epoch 1 and after epoch 2, each time a fresh start.
    for epochs in (1, 2):
        fit_resumable(_build, _batches(), epochs, tmp_path / 'stopped', _schedule, 0)
    resumed, done = fit_resumable(_build, _batches(), 3, tmp_path / 'stopped', _schedule, 0)
    assert done == 2
    for first, second in zip(straight.get_weights(), resumed.get_weights()):
        np.testing.assert_array_equal(first, second)
    assert [epoch for epoch, _ in checkpoints(tmp_path / 'stopped')] == [2, 3][-KEEP:]
    # A finished run is loaded, not trained again.
    again, done = fit_resumable(_build, _batches(), 3, tmp_path / 'stopped', _schedule, 0)
    assert done == 3
    np.testing.assert_array_equal(again.get_weights()[0], straight.get_weights()[0])


def test_the_open_recipe_schedule_and_decoders():
    assert speech_open.step_schedule(0) == speech_open.LEARNING_RATE
    assert np.isclose(speech_open.step_schedule(speech_open.DECAY_EPOCHS[0]),
                      speech_open.LEARNING_RATE / 10)
    assert speech_open.CONFIG == speech.CONFIG
    options = speech_open.decoders(lm='the lm')
    assert list(options) == ['greedy', 'beam', 'beam+lm']
    assert 'lm' not in options['beam'] and options['beam+lm']['lm'] == 'the lm'


def test_the_open_recipe_width_option():
    # The recipe's model is the README's 1,408,669 parameters; --units widens
    # its recurrences only, and is refused for Deep Speech, whose width is fixed.
    assert speech_open.build_model().count_params() == 1408669
    wide = speech_open.build_model(units=256)
    assert wide.get_layer('birnn1').forward_layer.units == 256
    assert wide.get_layer('conv1').get_weights()[0].shape == \
        speech_open.build_model().get_layer('conv1').get_weights()[0].shape
    with pytest.raises(SystemExit):
        speech_open.main(['--model', 'deepspeech', '--units', '256'])


def test_each_variant_and_corpus_version_has_checkpoints_of_its_own():
    texts = ((False, False), (True, False), (True, True))  # (everyday, more_everyday)
    names = {speech_open.run_name(family, utterances, everyday, units, more)
             for family in ('deepspeech2', 'deepspeech') for utterances in (96000, 128000)
             for everyday, more in texts for units in (160, 256)}
    assert len(names) == 24
    assert speech_open.run_name('deepspeech2', 128000, True, 160) == \
        f'deepspeech2-128000-v{speech_open.open_corpus.FORMAT_VERSION}-everyday'
    with pytest.raises(SystemExit):
        speech_open.main(['--more-everyday', '--no-everyday'])


def test_another_seed_trains_on_new_utterances_and_tests_on_the_same(monkeypatch, tmp_path):
    # --seed draws the training utterances only: the test split, on which every
    # run is compared, stays the recipe's; and its checkpoints are its own.
    drawn = []

    class Drawn(Exception):
        pass

    def generate(split, count, seed, **options):
        drawn.append((split, count, seed))
        if split == 'test':
            raise Drawn
        return []

    monkeypatch.setattr(speech_open.open_corpus, 'Vocabulary', lambda: None)
    monkeypatch.setattr(speech_open.everyday_texts, 'training_sentences', lambda: ('hi there',))
    monkeypatch.setattr(speech_open.open_corpus, 'generate', generate)
    monkeypatch.setattr(speech_open.open_corpus, 'load', lambda paths: paths)
    with pytest.raises(Drawn):
        speech_open.main(['--seed', '3', '--utterances', '1000', '--output', str(tmp_path)])
    assert drawn == [('train', 1000, 3), ('test', speech_open.TEST_UTTERANCES, speech_open.SEED)]
    with pytest.raises(SystemExit):  # refused before anything is drawn
        speech_open.main(['--seed', '-1', '--output', str(tmp_path)])
    assert len(drawn) == 2
    recipe = speech_open.run_name('deepspeech2', 128000, True, 160, True)
    assert speech_open.run_name('deepspeech2', 128000, True, 160, True, seed=speech_open.SEED) \
        == recipe
    assert speech_open.run_name('deepspeech2', 128000, True, 160, True, seed=3) == \
        f'deepspeech2-128000-v{speech_open.open_corpus.FORMAT_VERSION}-seed3-everyday-more'


def test_fine_tuning_starts_from_the_file_in_checkpoints_of_its_own(tmp_path):
    trained = speech_open.build_model()
    minidl.set_seed(5)  # other weights than the recipe's seeded start
    other = zoo.speech.DeepSpeech2(**speech_open.CONFIG)
    path = tmp_path / 'start.h5'
    other.save_weights(path)
    started = speech_open.build_model(start=path)
    for expected, weights in zip(other.get_weights(), started.get_weights()):
        np.testing.assert_array_equal(expected, weights)
    assert not np.array_equal(trained.get_weights()[0], started.get_weights()[0])
    # Its checkpoints are the file's: another start file is another run.
    name = speech_open.run_name('deepspeech2', 128000, True, 160, True, path)
    assert name == speech_open.run_name('deepspeech2', 128000, True, 160, True) + \
        f'-from{file_digest(path)[:12]}'
    trained.save_weights(tmp_path / 'other.h5')
    assert speech_open.run_name('deepspeech2', 128000, True, 160, True,
                                tmp_path / 'other.h5') != name
    # The rate the recipe's schedule ends its epochs 9-11 on, then a tenth of it.
    rates = [speech_open.fine_tune_schedule(epoch)
             for epoch in range(speech_open.FINE_TUNE_EPOCHS)]
    np.testing.assert_allclose(rates, [speech_open.step_schedule(8)] * 2
                               + [speech_open.step_schedule(11)])


def test_more_everyday_texts_hold_no_phrase_the_model_is_judged_on():
    fortunes = ['what time is it', 'so what time is it now', 'a nice day', 'take cares',
                'one two three four five six seven']
    examples = ['i love you dearly', 'the lamp is on']
    # Whole phrases inside a sentence go ('i love you', 'what time is it'), a phrase's
    # words inside other words ('take cares') stay: the language model's English...
    english = speech_open.more_everyday_english(fortunes, examples)
    assert english == ['a nice day', 'take cares', 'one two three four five six seven',
                       'the lamp is on']
    # ...and the training texts', whose sentences are six words at most as ever.
    pool = speech_open.more_everyday_sentences(fortunes, examples)
    assert pool == ('a nice day', 'take cares', 'the lamp is on')


def test_checkpoints_of_another_schedule_are_refused(tmp_path):
    fit_resumable(_build, _batches(), 2, tmp_path, _schedule, 0)
    before = checkpoints(tmp_path)

    def constant(epoch):  # the same first epoch, then no decay: epoch 2's rate differs
        return 1e-2
    with pytest.raises(ValueError, match='epoch 2 was trained at learning rate 0.005, but '
                                         'the schedule gives it 0.01'):
        fit_resumable(_build, _batches(), 3, tmp_path, constant, 0)
    assert checkpoints(tmp_path) == before
    # Under its own schedule the run goes on.
    _, done = fit_resumable(_build, _batches(), 3, tmp_path, _schedule, 0)
    assert done == 2
