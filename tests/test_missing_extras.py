"""A missing optional dependency is named with the extra that installs it.

Each dependency is made unimportable (``sys.modules[name] = None``, which makes
``import name`` raise ImportError) in a fresh process, so the test holds on a
machine that has every extra installed.
"""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

CASES = {
    'mpi4py': ('import minidl_dist', "pip install 'minidl[dist]'"),
    'matplotlib': ('from minidl.datasets import glyphs; glyphs.load_data(samples_per_font=1)',
                   'pip install minidl[plot]'),
    'PIL': ("from minidl.preprocessing.image import load_img; load_img('any.png')",
            "pip install 'minidl[image]'"),
}


@pytest.mark.parametrize('module', sorted(CASES))
def test_the_error_names_the_extra(module):
    statement, hint = CASES[module]
    script = f'import sys; sys.modules[{module!r}] = None\n{statement}'
    done = subprocess.run([sys.executable, '-c', script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith('ImportError') and hint in last, done.stderr
