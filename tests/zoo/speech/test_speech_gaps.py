"""zoo.training.speech_gaps: the four sets pair each text with both kinds of voices, and the
command reports every set for both decodings."""

import numpy as np
import pytest

from zoo.speech import open_corpus, voices
from zoo.training import speech_gaps
from tests.zoo.speech.test_open_corpus import TINY, needs_espeak, needs_wordlist


@needs_espeak
def test_a_text_split_said_by_both_voice_splits_differs_by_the_voices_alone():
    vocabulary = open_corpus.Vocabulary(TINY)
    own = speech_gaps.utterances('test', 'test', 3, vocabulary)
    other = speech_gaps.utterances('test', 'train', 3, vocabulary)
    assert own.transcripts == other.transcripts and len(own.features) == 3
    assert {voices.split_of(voice) for voice in own.voices} == {'test'}
    assert {voices.split_of(voice) for voice in other.voices} == {'train'}
    assert all(f.shape[1] == 40 and f.dtype == np.float32 for f in own.features + other.features)
    assert not any(a.shape == b.shape and np.array_equal(a, b)
                   for a, b in zip(own.features, other.features))
    # Not the recipe's test utterances: another seed.
    recipe = [open_corpus.utterance('test', i, vocabulary)[0] for i in range(3)]
    assert recipe != own.transcripts


@needs_espeak
@needs_wordlist
def test_the_command_reports_each_set_with_both_decodings(capsys, tmp_path):
    pytest.importorskip('h5py')
    speech_gaps.main(['--utterances', '2'])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(speech_gaps.SETS) == 4
    assert lines[0].strip().startswith('held-out words, held-out voices: greedy CER')
    assert all('beam+lm CER' in line for line in lines)
    # --lm: a language model file; the registered one's copy gives the same rates.
    path = tmp_path / 'copy_lm.json.gz'
    speech_gaps.pretrained.language_model().save(path)
    speech_gaps.main(['--utterances', '2', '--lm', str(path)])
    assert capsys.readouterr().out.splitlines() == lines
