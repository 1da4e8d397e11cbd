"""The README's distributed example (train.py) runs as typed, plainly and under
``mpirun -np 2 python -m minidl_dist``, and prints its result once."""

import pathlib
import re

from tests.minidl_dist.launch import launch

README = pathlib.Path(__file__).resolve().parents[2] / 'README.md'


def train_script(tmp_path):
    blocks = re.findall(r'```py\n(# train\.py\n.*?)```', README.read_text(), re.S)
    assert len(blocks) == 1, 'the README shows one train.py'
    path = tmp_path / 'train.py'
    path.write_text(blocks[0])
    return path


def printed_accuracies(run):
    return [float(line.split()[-1]) for line in run.check().stdout.splitlines()
            if line.startswith('test accuracy')]


def test_train_py_prints_its_result_once_under_mpirun_and_plainly(tmp_path):
    script = train_script(tmp_path)
    assert 'mpirun -np 2 python -m minidl_dist train.py' in README.read_text()
    for ranks in (2, None):
        accuracies = printed_accuracies(launch(script, ranks=ranks, timeout=180,
                                               launcher=ranks is not None))
        assert len(accuracies) == 1 and accuracies[0] > 0.8, (ranks, accuracies)
