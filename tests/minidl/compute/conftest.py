"""Fixtures shared by the compute tests."""

import pytest

import minidl
from minidl.compute import blas_threads, vendor


@pytest.fixture
def two_threads(monkeypatch):
    """The worker pool on two threads for one test, BLAS given its threads back after."""
    monkeypatch.setattr(minidl.config, 'num_threads', 2)
    yield
    blas_threads.blas.release()  # the pool's hold on BLAS would outlast the test


@pytest.fixture
def onednn_on(monkeypatch):
    """oneDNN required for one test, and test-sized batches cut into chunks as large ones are."""
    from minidl.compute.onednn import primitive, rnn
    monkeypatch.setattr(minidl.config, 'use_onednn', 'always')
    monkeypatch.setattr(primitive, 'MIN_CHUNK_WORK', 1)
    monkeypatch.setattr(rnn, 'MIN_CHUNK_ROWS', 1)
    vendor.forget()
    yield
    vendor.forget()


@pytest.fixture
def executed(monkeypatch):
    """The oneDNN primitives run during the test, in order."""
    from minidl.compute.onednn import primitive
    ran = []
    execute = primitive.Primitive.execute

    def spy(self, *args, **kwargs):
        ran.append(self)
        return execute(self, *args, **kwargs)

    monkeypatch.setattr(primitive.Primitive, 'execute', spy)
    return ran

