"""The tutorials run as written: ``python tutorials/0N_....py <output directory>``, their
quick mode, each checked for the files it writes and the results it prints. Lesson 1 is
``make demo``; the lessons under mpirun are in test_distributed_lessons.py."""

import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / 'tutorials'
PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
# Quick settings measured 0.94 vs 0.22 (lesson 2), digit 0.91 and bold 0.92 (lesson 3,
# where 0.6 of the test images are bold); the bounds leave room for other CPUs' rounding,
# and still fail on a broken lesson.
PRINTED_MARGIN = 0.2
DIGIT_ACCURACY = 0.5
BOLD_ACCURACY = 0.75
# Lesson 4's quick run measured a greedy CER of 7.1 % (4.1 % with the language model).
SPEECH_GREEDY_CER = 0.12


def run_lesson(name, output_dir, timeout=180):
    """``python tutorials/<name>.py <output_dir>`` from another directory; its stdout."""
    pytest.importorskip('matplotlib')  # every lesson draws
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, str(TUTORIALS / f'{name}.py'), str(output_dir)],
                         cwd=output_dir.parent, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert run.returncode == 0, f'exit {run.returncode}\n{run.stdout}\n{run.stderr}'
    return run.stdout


def one(pattern, text):
    found = re.findall(pattern, text)
    assert len(found) == 1, f'{pattern!r} printed {len(found)} times in\n{text}'
    return found[0]


def is_png(path):
    return path.read_bytes()[:8] == PNG_SIGNATURE


def test_lesson_1_trains_saves_and_plots(tmp_path):
    pytest.importorskip('sklearn')
    output = run_lesson('01_lenet_digits', tmp_path / 'out')
    assert sorted(path.name for path in (tmp_path / 'out').iterdir()) == [
        'lenet_digits.h5', 'lenet_digits_curves.png']
    assert is_png(tmp_path / 'out' / 'lenet_digits_curves.png')
    assert 'Total params: 13,706' in output  # 160 + 4,640 + 8,256 + 650
    assert output.count('Epoch ') == 30  # fit's progress, one epoch at a time
    assert float(one(r'test accuracy ([\d.]+)', output)) >= 0.95
    assert 'predicts the same bits: True' in output


def test_lesson_2_pretrained_base_beats_training_from_scratch(tmp_path):
    pytest.importorskip('sklearn')
    output = run_lesson('02_transfer_learning', tmp_path / 'out')
    assert sorted(path.name for path in (tmp_path / 'out').iterdir()) == [
        'resnet20.png', 'transfer_learning.png']
    assert all(is_png(path) for path in (tmp_path / 'out').iterdir())
    assert '| task | pretrained on glyph letters | from scratch |' in output
    # Quick settings (one seed, few epochs): the frozen glyph features already
    # recognise digits in unseen fonts far better than the same epochs from scratch.
    pretrained, scratch = map(float, one(
        r'\| printed digits, unseen fonts \| ([\d.]+) ± [\d.]+ \| ([\d.]+) ± [\d.]+ \|', output))
    assert pretrained > scratch + PRINTED_MARGIN
    # Progress: a line per phase of each run.
    assert len(re.findall(r'    head, epoch 4/4: training loss', output)) == 2


def test_lesson_3_reads_an_image_folder_and_trains_two_outputs(tmp_path):
    output = run_lesson('03_functional_own_data', tmp_path / 'out')
    assert 'read 320 training and 100 test images of 10 classes' in output
    folder = tmp_path / 'out' / 'glyph_digits'
    assert len(list((folder / 'train' / '7').glob('*.png'))) == 32
    assert is_png(tmp_path / 'out' / 'own_data.png')
    digit, bold = map(float, one(r'unseen fonts: digit accuracy ([\d.]+), '
                                 r'bold accuracy ([\d.]+)', output))
    assert digit > DIGIT_ACCURACY  # chance: 0.1
    # The images keep their fonts' weights, so the bold output learns: always answering
    # 'bold' would score 0.6 on the test fonts.
    assert bold > BOLD_ACCURACY


def test_lesson_4_speech_features_training_and_decoding(tmp_path):
    output = run_lesson('04_speech_recognition', tmp_path / 'out')
    assert sorted(path.name for path in (tmp_path / 'out').iterdir()) == [
        'speech_ctc_output.png', 'speech_features.png']
    assert all(is_png(path) for path in (tmp_path / 'out').iterdir())
    first, last = map(float, one(r'CTC loss per utterance ([\d.]+) after epoch 1, '
                                 r'([\d.]+) after epoch 3', output))
    assert last < 0.8 * first  # CTC from scratch: the loss falls in a few epochs
    assert output.count('16/16 - ') == 3  # fit's progress, a line per epoch
    # The pretrained model on 40 utterances of voices it never heard (quick settings):
    # the language model corrects some of the greedy errors.
    cer = {name: float(rate) / 100 for name, rate in re.findall(
        r'\| (greedy|beam 16 \+ 5-gram LM) \| ([\d.]+)% \|', output)}
    assert cer['greedy'] < SPEECH_GREEDY_CER
    assert cer['beam 16 + 5-gram LM'] < cer['greedy']


@pytest.mark.parametrize('path', sorted(TUTORIALS.glob('[0-9][0-9]_*.py')),
                         ids=lambda path: path.stem)
def test_every_lesson_takes_the_same_arguments_and_states_its_time(path):
    """``[output directory] [--full]`` by argparse (output_dir defaulting to demo_output),
    shown in the docstring's usage line, and a quick-mode time measured and stated."""
    source = path.read_text()
    docstring = ast.get_docstring(ast.parse(source))
    assert re.search(rf'python .*tutorials/{path.name} \[output directory\] \[--full\]',
                     docstring), docstring
    assert "parser.add_argument('output_dir', nargs='?', default='demo_output'" in source
    assert "parser.add_argument('--full', action='store_true'" in source
    assert re.search(r'The\s+quick\s+mode\s+took\s+[\d.]+\s+s\s', docstring), docstring
    # Every line at once, also through a pipe or mpirun (else buffered until the end).
    assert 'sys.stdout.reconfigure(line_buffering=True)' in source
