"""Work on large host arrays split over the machine's cores.

numpy runs each element-wise operation and each copy on one core; only its
matrix products (OpenBLAS) use them all. For a convolution, whose im2col
copies take as long as its products on few channels, it is faster to cut
the batch into one part per core and run each part's copies *and* products
on its own thread, with OpenBLAS held to one thread inside each part:
:func:`run_parts`. numpy releases the GIL in its loops and in BLAS, so the
parts really run at the same time.

Results depend only on how the work is cut, never on timing: each part
writes its own outputs, and partial sums are added in part order by the
caller. The number of parts is the thread count (:func:`thread_count`), so
a run gives the same bits on machines with the same thread count, just as
OpenBLAS's own results depend on its thread count.
"""

import ctypes
import glob
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_pool = None
_pool_lock = threading.Lock()
_UNSET = object()
_blas_threads_local = _UNSET


def thread_count():
    """Threads to use: ``MINIDL_NUM_THREADS``, ``OMP_NUM_THREADS`` or
    ``OPENBLAS_NUM_THREADS`` if set (so limiting BLAS limits minidl too),
    else the cores this process may run on."""
    for variable in ('MINIDL_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
        value = os.environ.get(variable, '')
        if value.isdigit() and int(value) > 0:
            return int(value)
    if hasattr(os, 'sched_getaffinity'):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _set_blas_threads_local():
    """OpenBLAS's per-thread thread count setter of numpy's own build, or None.

    ``openblas_set_num_threads_local(n)`` (OpenBLAS >= 0.3.27) limits the
    products called from the calling thread only and returns the previous
    limit. Without it (another BLAS), parts run one after the other.
    """
    global _blas_threads_local
    if _blas_threads_local is _UNSET:
        _blas_threads_local = None
        libraries = os.path.join(os.path.dirname(np.__file__) + '.libs', '*openblas*')
        for path in glob.glob(libraries):
            try:
                function = ctypes.CDLL(path).openblas_set_num_threads_local
            except (OSError, AttributeError):
                continue
            function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
            _blas_threads_local = function
            break
    return _blas_threads_local


def _executor(workers):
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < workers:
            _pool = ThreadPoolExecutor(workers, thread_name_prefix='minidl')
        return _pool


def split(count, parts):
    """``range(count)`` cut into ``parts`` contiguous slices of near-equal size."""
    parts = max(1, min(parts, count))
    bounds = [count * part // parts for part in range(parts + 1)]
    return [slice(start, stop) for start, stop in zip(bounds[:-1], bounds[1:])]


def run_parts(work, count, parallel=True):
    """``[work(part) for part in split(count, thread_count())]``, run concurrently.

    Args:
        work: A function of a slice of ``range(count)`` (e.g. of the images
            of a batch) that writes only its own part of any shared output.
        count: The length of what is split.
        parallel: False to run the same parts one after the other (for
            arrays that do not live on the host).

    Returns:
        The parts' results, in part order.
    """
    parts = split(count, thread_count())
    limit = _set_blas_threads_local() if parallel and len(parts) > 1 else None
    if limit is None:
        return [work(part) for part in parts]

    def work_alone(part):
        previous = limit(1)
        try:
            return work(part)
        finally:
            limit(previous)

    pending = [_executor(len(parts) - 1).submit(work_alone, part) for part in parts[1:]]
    try:
        first = work_alone(parts[0])
    finally:
        others = [future.result() for future in pending]
    return [first] + others
