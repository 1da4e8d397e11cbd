"""The worker pool: minidl spreads its CPU work over the cores itself.

numpy releases the GIL inside copies, ufunc loops and BLAS calls on large
arrays, so plain Python threads can run numpy passes on several cores at
once. A Function that wants the cores splits its work into *tasks* fixed by
the data alone (chunks of a set number of images, blocks of rows, a
recurrent layer's directions, the blocks of a large product), never by the
number of threads, and combines their results in task order. Results are
therefore bitwise the same with any number of threads, one included.

The pool has :func:`minidl.compute.threads.num_threads` threads, the calling
thread one of them; each worker is handed its group of tasks with two plain
locks (:class:`_Worker`).
"""

import functools
import os
import threading

import numpy as np

from minidl.compute import threads

_state = threading.local()  # .in_task: this thread is running a task


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


def in_task():
    """Whether the calling thread is running a task of :func:`run_tasks` (whose own
    tasks then run in that thread, one after the other)."""
    return getattr(_state, 'in_task', False)


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
    A task that calls ``run_tasks`` again runs its own tasks in its thread,
    and so does a call from another thread while the workers serve one.

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
    if xp is not np or in_task():
        return [task() for task in tasks]
    pool_threads = threads.num_threads()
    threads.limit_blas(pool_threads)
    used = min(pool_threads, len(tasks))
    if used <= 1:
        return [task() for task in tasks]
    bounds = [len(tasks) * k // used for k in range(used + 1)]
    groups = [tasks[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
    if not _dispatch.acquire(blocking=False):  # another thread's call has the workers
        return [task() for task in tasks]
    started = []
    try:
        workers = _pool(used - 1)
        for worker, group in zip(workers, groups[1:]):
            worker.start(group)
            started.append(worker)
        outcomes = [_run_group(groups[0])]
        while started:
            outcomes.append(started[0].outcome())
            del started[0]
    finally:
        if started:  # interrupted (Ctrl-C) while workers ran: they finish alone, unused
            _discard(started)
        _dispatch.release()
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


class _Worker:
    """A pool thread, handed one group of tasks at a time.

    Two plain locks hand the group over and its outcome back: a release that
    wakes the waiting thread is the cheapest hand-off Python has (12 us here,
    against 20 for a ThreadPoolExecutor's submit and result, whose futures,
    conditions and queue cost Python time on both sides; a small model's
    step hands off several times).
    """

    def __init__(self, name):
        self._go, self._done = threading.Lock(), threading.Lock()
        self._go.acquire()
        self._done.acquire()
        self._group = self._outcome = None
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    def start(self, group):
        """Run ``group`` (a list of tasks) on this thread; :meth:`outcome` waits for it."""
        self._group = group
        self._go.release()

    def outcome(self):
        """``_run_group``'s (results, error) of the group started last."""
        self._done.acquire()
        outcome, self._outcome = self._outcome, None
        return outcome

    def _serve(self):
        while True:
            self._go.acquire()
            try:
                self._outcome = _run_group(self._group)
            except BaseException as error:  # (SystemExit in a task) the caller re-raises it
                self._outcome = None, error
            finally:
                self._group = None
                self._done.release()


# One call of run_tasks at a time hands work to the workers; a call made meanwhile from
# another thread runs its tasks in that thread, in order (the same results).
_dispatch, _pool_lock = threading.Lock(), threading.Lock()
_workers = []


def _pool(count):
    """The first ``count`` workers, made as needed."""
    with _pool_lock:
        while len(_workers) < count:
            _workers.append(_Worker(f'minidl_{len(_workers)}'))
        return _workers[:count]


def _discard(workers):
    """Leave ``workers`` (still running a group nobody waits for) out of the pool."""
    with _pool_lock:
        _workers[:] = [worker for worker in _workers if worker not in workers]


def _forget_pool():
    """In a forked child: the parent's worker threads do not exist there."""
    global _dispatch, _pool_lock, _workers
    _dispatch, _pool_lock, _workers = threading.Lock(), threading.Lock(), []


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_forget_pool)
