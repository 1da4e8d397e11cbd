"""A process's share of the host's cores, and BLAS held to it (CPU and rank counts faked)."""

import contextlib

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import minidl
from minidl.compute import blas_threads, pool, threads


def _blas_threads():
    return [library['num_threads'] for library in threadpool_info()
            if library['user_api'] == 'blas']


@pytest.fixture
def host(monkeypatch):
    """``host(cpus, ranks)`` fakes the usable CPUs and the ranks sharing them, for one test."""
    def fake(cpus, ranks):
        monkeypatch.setattr(threads, '_usable_cpus', lambda: cpus)
        monkeypatch.setattr(threads, 'ranks_on_host', ranks)
    return fake


@contextlib.contextmanager
def blas_starting_at(count):
    """BLAS at ``count`` threads when minidl first looks; its own count given back after."""
    blas_threads.blas.release()  # minidl reads the libraries' counts afresh
    with threadpool_limits(count, user_api='blas'):
        try:
            yield
        finally:
            blas_threads.blas.release()


@pytest.mark.parametrize('cpus, ranks, share', [
    (2, 1, 2), (2, 2, 1), (8, 3, 2), (2, 4, 1), (8, 0, 8)])
def test_the_share_is_the_cpus_divided_among_the_ranks_and_at_least_one(host, cpus, ranks, share):
    host(cpus, ranks)
    assert threads.cpu_share() == share


def test_the_default_pool_takes_the_share_up_to_four_threads(host, monkeypatch):
    monkeypatch.delenv('MINIDL_NUM_THREADS', raising=False)
    monkeypatch.setattr(minidl.config, 'num_threads', None)
    for cpus, ranks, size in [(2, 1, 2), (2, 2, 1), (8, 2, 4), (16, 2, 4), (64, 1, 4)]:
        host(cpus, ranks)
        assert threads.num_threads() == size


def test_a_one_thread_pool_holds_blas_to_the_share(host, monkeypatch):
    monkeypatch.setattr(minidl.config, 'num_threads', 1)
    with blas_starting_at(2):
        before = _blas_threads()
        host(2, 2)
        pool.run_tasks([lambda: None])
        assert _blas_threads() == [1] * len(before)
        host(2, 1)  # a share of two: BLAS gets its own two back
        pool.run_tasks([lambda: None])
        assert _blas_threads() == before


def test_blas_never_gets_more_threads_than_it_started_with(host, monkeypatch):
    monkeypatch.setattr(minidl.config, 'num_threads', 1)
    with blas_starting_at(1):  # as with OPENBLAS_NUM_THREADS=1
        host(8, 2)  # a share of four
        pool.run_tasks([lambda: None])
        assert set(_blas_threads()) == {1}
    with blas_starting_at(2):
        host(8, 1)
        pool.run_tasks([lambda: None])
        assert set(_blas_threads()) == {2}


def test_sharing_the_host_holds_blas_at_once(host, monkeypatch):
    # A process whose products are too small to be cut into tasks never splits
    # one, so the limit cannot wait for the next task split.
    monkeypatch.setattr(minidl.config, 'num_threads', None)
    monkeypatch.delenv('MINIDL_NUM_THREADS', raising=False)
    with blas_starting_at(2):
        host(2, 1)
        threads.set_ranks_on_host(2)
        assert threads.num_threads() == 1
        assert set(_blas_threads()) == {1}
