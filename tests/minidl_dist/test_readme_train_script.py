"""The README's distributed examples run as typed, with only the extras the README names.

train.py runs by the README's own two lines (``source .venv/bin/activate``,
``mpirun -np 2 python -m minidl_dist train.py``), run by bash in a directory
holding train.py and a ``.venv`` link to the running venv, and plainly
(``python train.py`` in the activated venv), as the line's comment says; it prints its result once.
The hybrid-parallel script runs under mpirun as its paragraph says. Each can
import only what ``pip install .`` with the README's extras installs
(``tests/readme_blocks.sandbox``).
"""

import re
import sys

import pytest

from tests.minidl_dist.launch import MPIRUN
from tests.readme_blocks import BY_NAME, README, block, run, sandbox

pytestmark = pytest.mark.mpi


@pytest.fixture
def directory(tmp_path):
    """An empty directory with ``.venv``, a link to the running venv, as the README's lines
    expect (they run in a checkout after ``make``)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip('the README activates a venv; these tests do not run in one')
    if not MPIRUN.exists():
        pytest.skip('mpirun (the mpich wheel) is not installed in this environment')
    (tmp_path / '.venv').symlink_to(sys.prefix, target_is_directory=True)
    return tmp_path


def printed_accuracies(stdout):
    return [float(line.split()[-1]) for line in stdout.splitlines()
            if line.startswith('test accuracy')]


def test_train_py_by_the_readme_lines_prints_its_result_once(directory):
    install = re.fullmatch(r"pip install -e '\.\[([a-z,]+)\]'\n", block('install-dist').text)
    extras = tuple(install.group(1).split(','))
    assert extras == BY_NAME['train.py'].extras == BY_NAME['mpirun'].extras
    env = sandbox(directory / '.sandbox', extras)
    (directory / 'train.py').write_text(block('train.py').text)
    lines = block('mpirun').text
    assert 'mpirun -np 2 python -m minidl_dist train.py' in lines
    for command in (lines, 'source .venv/bin/activate\npython train.py'):
        done = run(command, directory, env, 180, shell=True)
        assert done.returncode == 0, f'{command}\n{done.stdout}\n{done.stderr}'
        accuracies = printed_accuracies(done.stdout)
        assert len(accuracies) == 1 and accuracies[0] > 0.8, (command, done.stdout)


def test_the_hybrid_script_under_mpirun(directory):
    """Run by the command its paragraph gives, with the dist extra alone."""
    (directory / 'hybrid.py').write_text(block('hybrid').text)
    command = re.search(r'run as `(mpirun [^`]*hybrid\.py)`', README.read_text()).group(1)
    env = sandbox(directory / '.sandbox', BY_NAME['hybrid'].extras)
    done = run(f'source .venv/bin/activate\n{command}', directory, env, 180, shell=True)
    assert done.returncode == 0, f'{command}\n{done.stdout}\n{done.stderr}'
    # Each rank's summary shows its half of fc6's 512 units.
    assert 'model-parallel 0:256/512' in done.stdout, done.stdout
    assert 'model-parallel 256:512/512' in done.stdout, done.stdout
