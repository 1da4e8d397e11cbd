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
:func:`default_threads`: the process's share of the cores, up to four.

Processes of one job on one host (``mpirun -np N``) share its cores:
:func:`cpu_share` is one process's share, and no thread pool of the process
should run more threads than that. With one pool thread BLAS gets at most
the share, not its own default of every core: two ranks on two cores with
two BLAS threads each (four spinning threads on two cores) made a ResNet-20
step several times slower than one BLAS thread each. A lower count that
BLAS started with (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``) is kept.
"""

import functools
import os
import threading

import numpy as np

from minidl import config

_state = threading.local()  # .in_task: this thread is running a task


MAX_DEFAULT_THREADS = 4
ranks_on_host = 1  # processes sharing this host's cores (set_ranks_on_host)


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
    """The process's share of the cores (:func:`cpu_share`), or 1 where that is more
    than ``MAX_DEFAULT_THREADS``: the work is cut into about four parts, and beyond
    that BLAS's own threads use a large machine better."""
    share = cpu_share()
    return share if share <= MAX_DEFAULT_THREADS else 1


def cpu_share():
    """This process's share of the host's cores: the most threads any of its pools should run.

    minidl's pool and BLAS keep to it; another library's threads (an OpenMP
    runtime's, say) should too, or the job's processes oversubscribe the cores.

    Returns:
        The CPUs this process may use, divided by the number of processes of
        the job on this host (``minidl_dist.init`` sets it), at least 1.
    """
    return max(1, _usable_cpus() // max(1, ranks_on_host))


def set_ranks_on_host(count):
    """Share the host's cores among ``count`` processes, BLAS's threads included.

    BLAS is limited here and not only at the next task split: a process whose
    products are all too small to be cut into tasks never splits one.

    Args:
        count: The processes of the job on this host, this one included.
    """
    global ranks_on_host
    ranks_on_host = count
    _limit_blas(num_threads())


def hold_blas():
    """Hold BLAS to the threads it has while tasks run (one while the pool has several),
    now rather than at the next task split.

    For numpy or LAPACK work outside tasks that would otherwise run on BLAS's
    own threads: the QR of an Orthogonal initializer took 5 s instead of
    0.2 s for a GRU of 512 units on two busy cores, its threads waiting on
    each other.
    """
    _limit_blas(num_threads())


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
    pool_threads = num_threads()
    _limit_blas(pool_threads)
    threads = min(pool_threads, len(tasks))
    if threads <= 1:
        return [task() for task in tasks]
    bounds = [len(tasks) * k // threads for k in range(threads + 1)]
    groups = [tasks[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
    if not _dispatch.acquire(blocking=False):  # another thread's call has the workers
        return [task() for task in tasks]
    started = []
    try:
        workers = _pool(threads - 1)
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


def _limit_blas(pool_threads):
    """BLAS gets one thread while the pool has several, else at most the process's share."""
    _blas.limit(1 if pool_threads > 1 else cpu_share())


class _BlasThreads:
    """Holds the BLAS libraries to at most a given number of threads.

    Held for the whole process, not per task: an idle OpenBLAS thread spins
    for about 0.1 s after each product it shared, taking the core a worker
    (or another process of the job) needs. A library never gets more threads
    than it had before the hold, so a lower count the user chose is kept; a
    limit at or above every library's own count gives them back their counts.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.count = None  # the limit last set; None before the first and after release()
        self.saved = None  # the libraries' own counts, while any is held below its own
        self.libraries = None

    def limit(self, count):
        """Hold each BLAS library to ``count`` threads or its own count, whichever is less."""
        if count == self.count:  # the usual case: checked without the lock
            return
        with self.lock:
            libraries = self._libraries()
            if self.saved is None:
                self.saved = [library.num_threads for library in libraries]
            for library, own in zip(libraries, self.saved):
                library.set_num_threads(min(own, count))
            if all(own <= count for own in self.saved):
                # Nothing is held below its own count: the next limit reads the counts
                # again, so a change the user makes in between is kept.
                self.saved = None
            self.count = count

    def release(self):
        """Give every library back the count it had before the hold."""
        with self.lock:
            if self.saved is not None:
                for library, own in zip(self._libraries(), self.saved):
                    library.set_num_threads(own)
            self.count = self.saved = None

    def _libraries(self):
        if self.libraries is None:  # found once, on first use: the search reads every library
            # Imported here: pip installs it with minidl (pyproject.toml), but `import
            # minidl` needs only numpy, h5py and tqdm (tests/test_import_rules.py).
            # Without threadpoolctl BLAS keeps its threads (slower, the same bits).
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self.libraries = []
            else:
                self.libraries = ThreadpoolController().select(user_api='blas').lib_controllers
        return self.libraries


_blas = _BlasThreads()
