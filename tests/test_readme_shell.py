"""The README's shell blocks run as typed (the mpirun lines run in
``minidl_dist/test_readme_train_script.py``).

They run under bash with the running venv's ``bin/`` first on PATH, as after
``source .venv/bin/activate``; what cannot run here, quickly, is run as a dry
run (``make -n``, ``pip install --dry-run``), which still checks that each
name in the line (a make target, an extra) exists.
"""

import os
import pathlib
import re
import shutil
import sys
import tomllib

import pytest

from tests.readme_blocks import ROOT, block, run, sandbox

BIN = pathlib.Path(sys.executable).parent


def activated(env):
    """``env`` with the venv's bin/ first on PATH, as ``source .venv/bin/activate`` leaves it."""
    return dict(env, PATH=f'{BIN}:{env.get("PATH", "")}', VIRTUAL_ENV=str(BIN.parent))


def test_the_make_block():
    """Each `make` line names a target whose recipe `make -n` prints; what the recipes run
    is tested: CI runs `make test`, tests/tutorials the demo's lesson, test_benchmarks the
    benchmarks. The quick run the block mentions deselects a registered marker."""
    text = block('make').text
    targets = re.findall(r'^make (\w+)', text, re.M)
    assert targets == ['demo', 'test', 'bench']
    for target in targets:
        done = run(['make', '-n', target], ROOT, activated(dict(os.environ)), 60)
        assert done.returncode == 0, done.stderr
        if target == 'demo':
            assert 'tutorials/01_lenet_digits.py demo_output' in done.stdout
            assert "run_lesson('01_lenet_digits'" in \
                (ROOT / 'tests/tutorials/test_lessons.py').read_text()
        if target == 'bench':
            assert '-m benchmarks' in done.stdout and (ROOT / 'tests/test_benchmarks.py').exists()
    assert ".venv/bin/python -m pytest -m 'not mpi'" in text
    with open(ROOT / 'pyproject.toml', 'rb') as file:
        markers = tomllib.load(file)['tool']['pytest']['ini_options']['markers']
    assert any(marker.startswith('mpi:') for marker in markers)


def test_the_pip_install_block_as_a_dry_run():
    """`pip install -e '.[dist,data]'` exactly, with --dry-run and from what is installed
    (no index, no build isolation: nothing is downloaded, nothing changes): the extras
    exist and everything they need is here."""
    with open(ROOT / 'pyproject.toml', 'rb') as file:
        needed = tomllib.load(file)['build-system']['requires']
    setuptools = pytest.importorskip('setuptools')
    minimum = re.fullmatch(r'setuptools>=(\d+)', needed[0])
    if int(setuptools.__version__.split('.')[0]) < int(minimum.group(1)):
        pytest.skip(f'the dry run builds with the venv\'s setuptools {setuptools.__version__} '
                    f'(no build isolation, so nothing is downloaded); pyproject needs '
                    f'{needed[0]}')
    text = block('install-dist').text
    assert re.fullmatch(r"pip install -e '\.\[[a-z,]+\]'\n", text)
    dry = 'pip() { python -m pip "$@" --dry-run --no-index --no-build-isolation; }\n'
    done = run(dry + text, ROOT, activated(dict(os.environ)), 120, shell=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Would install minidl-' in done.stdout, done.stdout


def session(text):
    """[(command, expected output lines)] of a shell session shown as `$ command` lines."""
    steps = []
    for line in text.splitlines():
        if line.startswith('$ '):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


@pytest.mark.skipif(shutil.which('espeak-ng') is None,
                    reason='espeak-ng (apt-get install espeak-ng, a Debian package that '
                           '`make test` does not install) is not on PATH')
def test_the_espeak_session_prints_what_the_readme_shows(tmp_path):
    """Each `$` line run by bash in an empty directory, with only what a plain
    `pip install .` installs importable; its output is the lines the README shows."""
    env = activated(sandbox(tmp_path / '.sandbox'))
    for command, expected in session(block('wav').text):
        done = run(command, tmp_path, env, 180, shell=True)
        assert done.returncode == 0, f'{command}\n{done.stdout}\n{done.stderr}'
        assert done.stdout.splitlines() == expected, (command, done.stdout, done.stderr)
