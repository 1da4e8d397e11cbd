import pathlib
import sys

import pytest

# Make ``tests`` importable as a package (for tests.gradcases) wherever pytest runs.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


@pytest.fixture(autouse=True)
def _private_minidl_home(tmp_path_factory, monkeypatch):
    """Downloads and zoo weights go to the session's own cache, never the user's ~/.minidl."""
    monkeypatch.setenv('MINIDL_HOME', str(tmp_path_factory.getbasetemp() / 'minidl_home'))


def pytest_collection_modifyitems(items):
    """Mark ``mpi`` the tests of every module that launches processes under mpirun (it
    imports tests.minidl_dist.launch), so that ``pytest -m 'not mpi'`` is a quick local run."""
    from tests.minidl_dist import launch
    for item in items:
        module = getattr(item, 'module', None)
        if module is not None and getattr(module, 'launch', None) is launch.launch:
            item.add_marker(pytest.mark.mpi)
