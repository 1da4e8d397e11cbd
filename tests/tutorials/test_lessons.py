"""The tutorials run as written; lesson 1 is ``make demo``."""

import importlib.util
import pathlib

import pytest

TUTORIALS = pathlib.Path(__file__).resolve().parents[2] / 'tutorials'
# Quick settings measured 0.99 vs 0.56 (lesson 2) and 0.85 (lesson 3); the bounds
# leave room for other CPUs' rounding, and still fail on a broken lesson.
PRINTED_MARGIN = 0.2
DIGIT_ACCURACY = 0.5
# Lesson 4's quick run measured a greedy CER of 7.1 % (4.1 % with the language model).
SPEECH_GREEDY_CER = 0.12


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TUTORIALS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lesson_1_trains_saves_and_plots(tmp_path, capsys):
    pytest.importorskip('sklearn')
    pytest.importorskip('matplotlib')
    accuracy = _load('01_lenet_digits').main(tmp_path)
    assert accuracy >= 0.95
    assert (tmp_path / 'lenet_digits.h5').stat().st_size > 0
    assert (tmp_path / 'lenet_digits_curves.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    output = capsys.readouterr().out
    assert 'Total params: 13,706' in output  # 160 + 4,640 + 8,256 + 650
    assert 'predicts the same bits: True' in output


def test_lesson_2_pretrained_base_beats_training_from_scratch(tmp_path, capsys):
    pytest.importorskip('sklearn')
    pytest.importorskip('matplotlib')
    means = _load('02_transfer_learning').main(tmp_path)
    output = capsys.readouterr().out
    assert '| task | pretrained on glyph letters | from scratch |' in output
    # Quick settings (one seed, few epochs): the frozen glyph features already
    # recognise digits in unseen fonts far better than the same epochs from scratch.
    task = 'printed digits, unseen fonts'
    assert means[task, True] > means[task, False] + PRINTED_MARGIN
    assert (tmp_path / 'transfer_learning.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_lesson_3_reads_an_image_folder_and_trains_two_outputs(tmp_path, capsys):
    pytest.importorskip('matplotlib')
    results = _load('03_functional_own_data').main(tmp_path)
    output = capsys.readouterr().out
    assert 'read 320 training and 100 test images of 10 classes' in output
    assert len(list((tmp_path / 'glyph_digits' / 'train' / '7').glob('*.png'))) == 32
    assert results['digit_accuracy'] > DIGIT_ACCURACY  # chance: 0.1
    assert (tmp_path / 'own_data.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_lesson_4_speech_features_training_and_decoding(tmp_path, capsys):
    pytest.importorskip('matplotlib')
    results = _load('04_speech_recognition').main(tmp_path)
    output = capsys.readouterr().out
    assert '| decoding | CER | WER |' in output
    losses = results['losses']
    assert losses[-1] < 0.8 * losses[0]  # CTC from scratch: the loss falls in a few epochs
    # The pretrained model on 40 utterances of voices it never heard (quick settings):
    # the language model corrects some of the greedy errors.
    cer = {name: rates[0] for name, rates in results['decoders'].items()}
    assert cer['greedy'] < SPEECH_GREEDY_CER
    assert cer['beam 16 + 5-gram LM'] < cer['greedy']
    for image in ('speech_features.png', 'speech_ctc_output.png'):
        assert (tmp_path / image).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
