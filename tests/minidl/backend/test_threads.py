"""Work split over threads: fixed parts, results in part order, errors surface."""

import threading

import numpy as np
import pytest

from minidl.backend import threads


@pytest.mark.parametrize('count,parts', [(10, 3), (2, 4), (7, 1), (5, 5)])
def test_split_covers_the_range_once_in_near_equal_parts(count, parts):
    slices = threads.split(count, parts)
    assert len(slices) == min(count, parts)
    covered = [i for part in slices for i in range(count)[part]]
    assert covered == list(range(count))
    sizes = [part.stop - part.start for part in slices]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize('thread_count', ['1', '3'])
def test_run_parts_returns_results_in_part_order(monkeypatch, thread_count):
    monkeypatch.setenv('MINIDL_NUM_THREADS', thread_count)
    names = set()

    def work(part):
        names.add(threading.current_thread().name)
        return (part.start, part.stop)

    results = threads.run_parts(work, 7)
    expected = [(part.start, part.stop) for part in threads.split(7, int(thread_count))]
    assert results == expected
    if thread_count == '3' and threads._set_blas_threads_local() is not None:
        assert len(names) >= 2  # the first part on the caller, the others on the pool


def test_an_error_in_any_part_is_raised(monkeypatch):
    monkeypatch.setenv('MINIDL_NUM_THREADS', '2')

    def fail_in_the_last_part(part):
        if part.stop == 6:
            raise ValueError('bad part')

    with pytest.raises(ValueError, match='bad part'):
        threads.run_parts(fail_in_the_last_part, 6)


def test_thread_count_follows_the_environment(monkeypatch):
    for variable in ('MINIDL_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv('OPENBLAS_NUM_THREADS', '3')
    assert threads.thread_count() == 3
    monkeypatch.setenv('MINIDL_NUM_THREADS', '5')
    assert threads.thread_count() == 5


def test_numpy_openblas_can_be_limited_per_thread():
    """numpy's wheels bundle OpenBLAS; its per-thread limit is what keeps parts
    from oversubscribing the cores."""
    if 'openblas' not in str(np.show_config(mode='dicts')).lower():
        pytest.skip('numpy is not built with OpenBLAS')
    limit = threads._set_blas_threads_local()
    assert limit is not None
    previous = limit(1)
    assert limit(previous) == 1
