"""glibc tuning at import: applied on Linux, and the documented opt-out works."""

import sys

import pytest

from minidl.compute.memory import keep_freed_memory


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc only')
def test_glibc_accepts_the_thresholds():
    assert keep_freed_memory() is True


def test_opt_out_leaves_the_c_library_alone(monkeypatch):
    monkeypatch.setenv('MINIDL_KEEP_FREED_MEMORY', '0')
    assert keep_freed_memory() is False
