"""``pytest -q`` prints its summary line: the project's pytest settings add no ``-q``
of their own (with one there, a user's ``-q`` made ``-qq``, which prints none)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_quiet_run_ends_with_the_summary_line():
    done = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           'tests/test_import_rules.py', '-k', 'needs_only'],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ' passed' in done.stdout.strip().splitlines()[-1]
