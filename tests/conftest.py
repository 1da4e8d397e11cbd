import pathlib
import sys

import pytest

# Make ``tests`` importable as a package (for tests.gradcases) wherever pytest runs.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


@pytest.fixture(autouse=True)
def _private_minidl_home(tmp_path_factory, monkeypatch):
    """Downloads and zoo weights go to the session's own cache, never the user's ~/.minidl."""
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path_factory.getbasetemp() / 'minidl_home'))
