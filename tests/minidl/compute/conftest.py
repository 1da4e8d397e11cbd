"""Fixtures shared by the compute tests."""

import pytest

import minidl
from minidl.compute import threads


@pytest.fixture
def two_threads(monkeypatch):
    """The worker pool on two threads for one test, BLAS given its threads back after."""
    monkeypatch.setattr(minidl.config, 'num_threads', 2)
    yield
    threads._blas.release()  # the pool's hold on BLAS would outlast the test
