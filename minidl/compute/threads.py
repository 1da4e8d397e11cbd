"""Worker threads: minidl spreads its CPU work over the cores itself.

numpy releases the GIL inside copies, ufunc loops and BLAS calls on large
arrays, so plain Python threads can run numpy passes on several cores at
once. A Function that wants the cores splits its work into *tasks* fixed by
the data alone (chunks of a set number of images, blocks of rows, a
recurrent layer's directions, the blocks of a large product), never by the
number of threads, and combines their results in task order. Results are
therefore bitwise the same with any number of threads, one included.

While the pool has several threads, BLAS has one, for the whole process,
and products that should use every core are cut into blocks run as tasks
(:func:`minidl.compute.products.matmul`). OpenBLAS's idle threads spin for about 0.1 s after each
product they shared before they sleep, taking the core a worker needs, so
BLAS threads and a pool do not mix: with BLAS held only while tasks ran, the
pool made AlexNet 1.1x and LeNet 1.25x slower (W4, W2 of ``benchmarks``);
held for the process, with their dense products cut, it makes them about
1.05x and 1.3x faster, ResNet-20 (W3) about 1.3x and the bidirectional
LSTM (W5) 1.35x. It costs an MLP's mid-sized products (W1) about 0.1 ms
each: a hand-off to a thread takes about 60 us here (2-core AMD EPYC,
OpenBLAS 0.3.31). A user's own numpy products in the same process also run
on one thread while the pool is on.

The number of threads is ``minidl.config.num_threads``, or when that is None
(the default) the environment variable ``MINIDL_NUM_THREADS``, else
:func:`default_threads`: the CPUs this process may use, up to four.
Setting 1 gives BLAS its threads back at minidl's next operation.
"""

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from minidl import config

_state = threading.local()  # .in_task: this thread is running a task


MAX_DEFAULT_THREADS = 4
ranks_on_host = 1  # processes sharing this host's cores (set by minidl_dist.init)


def num_threads():
    """The number of threads tasks run on (at least 1)."""
    count = config.num_threads
    if count is None:
        count = os.environ.get('MINIDL_NUM_THREADS') or default_threads()
    count = int(count)
    if count < 1:
        raise ValueError(f'minidl.config.num_threads must be None or at least 1, got {count}')
    return count


def default_threads():
    """The CPUs this process may use (its share when several ranks share the host),
    or 1 where that is more than ``MAX_DEFAULT_THREADS``: the work is cut into about
    four parts, and beyond that BLAS's own threads use a large machine better."""
    share = max(1, _usable_cpus() // max(1, ranks_on_host))
    return share if share <= MAX_DEFAULT_THREADS else 1


@functools.lru_cache(maxsize=None)
def _usable_cpus():
    """Read once: every task split asks for the thread count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


BLOCK_BYTES = 1 << 20


def row_blocks(array, block_bytes=None):
    """Slices of ``array``'s first axis of about ``block_bytes`` (``BLOCK_BYTES``) each.

    The blocks depend on the array's shape and dtype only, so work split by
    them (and sums of their parts, taken in order) is the same on any number
    of threads.
    """
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    rows = array.shape[0]
    row_bytes = max(1, array.nbytes // max(1, rows))
    step = max(1, block_bytes // row_bytes)
    return [slice(start, min(start + step, rows)) for start in range(0, rows, step)]


def map_tasks(function, items, xp=np):
    """``run_tasks`` of ``function(item)`` for each item (a block of rows, a chunk's start)."""
    return run_tasks([functools.partial(function, item) for item in items], xp)


def sum_in_order(parts):
    """The sum of the tasks' partial results, added in task order (so, deterministic)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def run_tasks(tasks, xp=np):
    """Run callables on the worker threads and return their results in order.

    The tasks are cut into one contiguous group per thread; the calling
    thread runs the first group. Every task has finished when this returns,
    also when one raised (the first exception in task order is re-raised).
    A task that calls ``run_tasks`` again runs its own tasks in its thread.

    Args:
        tasks: A sequence of callables taking no arguments. Each must write
            only to memory that no other task of the call reads or writes.
        xp: The array module the tasks compute with. Tasks on any other
            than numpy (CuPy queues its kernels on the device; a new thread
            would not be in the caller's device scope) run in order in the
            calling thread.

    Returns:
        A list of the tasks' results, in the order of ``tasks``.
    """
    tasks = list(tasks)
    if xp is not np or getattr(_state, 'in_task', False):
        return [task() for task in tasks]
    pool_threads = num_threads()
    if pool_threads > 1:
        _blas.hold()
    else:
        _blas.release()
    threads = min(pool_threads, len(tasks))
    if threads <= 1:
        return [task() for task in tasks]
    bounds = [len(tasks) * k // threads for k in range(threads + 1)]
    groups = [tasks[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
    futures = [_pool(threads - 1).submit(_run_group, group) for group in groups[1:]]
    first = _run_group(groups[0])
    outcomes = [first] + [future.result() for future in futures]
    results = []
    for values, error in outcomes:
        if error is not None:
            raise error
        results.extend(values)
    return results


def _run_group(tasks):
    """(results, None), or (None, the exception) once a task raised."""
    _state.in_task = True
    try:
        return [task() for task in tasks], None
    except Exception as error:  # re-raised by run_tasks, after every group is done
        return None, error
    finally:
        _state.in_task = False


_pool_lock = threading.Lock()
_executor, _workers = None, 0


def _pool(workers):
    """The executor, with at least ``workers`` threads (made again when too small)."""
    global _executor, _workers
    with _pool_lock:
        if _workers < workers:
            if _executor is not None:
                _executor.shutdown(wait=False)
            _executor, _workers = ThreadPoolExecutor(workers, thread_name_prefix='minidl'), workers
        return _executor


def _forget_pool():
    """In a forked child: the parent's worker threads do not exist there."""
    global _executor, _workers, _pool_lock
    _executor, _workers, _pool_lock = None, 0, threading.Lock()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_forget_pool)


class _BlasThreads:
    """Holds the BLAS libraries to one thread while the pool has several.

    Held for the whole process, not per task: an idle OpenBLAS thread spins
    for about 0.1 s after each product it shared, taking the core a worker
    needs, so while the pool is on BLAS never gets a second thread.
    Released (the saved counts restored) once the pool is back to one thread.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.saved = None  # the counts before the hold, while held
        self.libraries = None

    def hold(self):
        with self.lock:
            if self.saved is None:
                libraries = self._libraries()
                self.saved = [library.num_threads for library in libraries]
                for library in libraries:
                    library.set_num_threads(1)

    def release(self):
        if self.saved is None:  # the usual case: checked without the lock
            return
        with self.lock:
            if self.saved is not None:
                for library, count in zip(self._libraries(), self.saved):
                    library.set_num_threads(count)
                self.saved = None

    def _libraries(self):
        if self.libraries is None:  # found once, on first use: the search reads every library
            # Imported here, and optional: `import minidl` needs only numpy, h5py and tqdm.
            # Without threadpoolctl BLAS keeps its threads (slower, the same bits).
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self.libraries = []
            else:
                self.libraries = ThreadpoolController().select(user_api='blas').lib_controllers
        return self.libraries


_blas = _BlasThreads()
