"""Padded, length-sorted batches, and transcription that undoes the sorting and the padding."""

import numpy as np
import pytest

import minidl
from zoo.speech import (ENGLISH, DeepSpeech2, SpeechBatches, output_lengths, output_probabilities,
                        pad_features, pad_labels, transcribe)


def _utterances(lengths, bins=6, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((length, bins)).astype(np.float32) for length in lengths]


def test_padding_by_hand():
    first, second = _utterances([2, 3])
    batch = pad_features([first, second])
    assert batch.shape == (2, 3, 6) and batch.dtype == np.float32
    np.testing.assert_array_equal(batch[0, :2], first)
    np.testing.assert_array_equal(batch[0, 2], np.zeros(6))
    np.testing.assert_array_equal(batch[1], second)
    # ' ' is 1, 'a' 2, 'b' 3, "'" 28; the shorter transcript ends in blanks (0).
    np.testing.assert_array_equal(pad_labels(["ab a", "b'"]), [[2, 3, 1, 2], [3, 28, 0, 0]])


def test_bad_utterances_are_refused():
    with pytest.raises(ValueError, match='one number of bins'):
        pad_features(_utterances([2]) + _utterances([2], bins=5))
    with pytest.raises(ValueError, match='no frame'):
        pad_features([np.zeros((0, 6), np.float32)])
    with pytest.raises(ValueError, match='outside the alphabet'):
        pad_labels(['3 cats'])
    with pytest.raises(ValueError, match='transcripts'):
        SpeechBatches(_utterances([2, 3]), ['a'])


def test_batches_hold_utterances_of_similar_length_in_a_stable_order():
    lengths = [5, 2, 9, 2, 7, 3, 5]
    batches = SpeechBatches(_utterances(lengths), [f'{"a" * n}' for n in lengths], batch_size=3)
    assert len(batches) == 3
    # Sorted by length, ties in their original order: 2 (#1), 2 (#3), 3, 5 (#0), 5 (#6), 7, 9.
    assert [list(batches.indices(i)) for i in range(3)] == [[1, 3, 5], [0, 6, 4], [2]]
    x, y = batches[1]
    assert x.shape == (3, 7, 6) and y.shape == (3, 7)
    assert [int((row != 0).sum()) for row in y] == [5, 5, 7]
    with pytest.raises(IndexError):
        batches[3]


def test_transcription_gives_each_utterance_its_own_frames_in_input_order():
    minidl.set_seed(0)
    model = DeepSpeech2(input_dim=6, filters=2, rnn_layers=1, units=4)
    lengths = [9, 4, 13, 6, 4]
    utterances = _utterances(lengths)
    outputs = output_probabilities(model, utterances, batch_size=2)
    for utterance, output in zip(utterances, outputs):
        alone = model.predict(utterance[None])[0]
        assert len(output) == output_lengths([len(utterance)], 1)[0] == len(alone)
        np.testing.assert_allclose(output, alone, atol=1e-6)
    # Greedy decoding of those outputs, by hand: argmax, merge repeats, drop blanks.
    expected = []
    for output in outputs:
        best = output.argmax(axis=1)
        kept = [label for index, label in enumerate(best) if index == 0 or label != best[index - 1]]
        expected.append(ENGLISH.decode(kept))
    assert transcribe(model, utterances, batch_size=2) == expected
