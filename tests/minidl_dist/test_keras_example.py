"""A Keras example script, made distributed by three lines, trains under mpirun -np 2."""

import re

import pytest

from tests.minidl_dist.launch import SCRIPTS, launch


def test_three_lines_make_mnist_mlp_data_parallel():
    pytest.importorskip('sklearn')  # the digits set
    script = (SCRIPTS / 'mnist_mlp.py').read_text()
    assert len([line for line in script.splitlines() if line.endswith('# +')]) == 3
    run = launch('mnist_mlp.py', ranks=2, timeout=120).check()
    # One progress report (rank 0's), and both ranks hold the same trained model.
    assert run.stdout.count('Epoch 12/12') == 1
    accuracies = dict(re.findall(r'rank (\d): test accuracy (\d\.\d{4})', run.stdout))
    assert sorted(accuracies) == ['0', '1']
    assert accuracies['0'] == accuracies['1']
    # Learned (chance is 0.1): on the digits' 360 test images this model ends
    # between 0.93 and 0.99 depending on the seed, so the bound leaves room.
    assert float(accuracies['0']) >= 0.9
