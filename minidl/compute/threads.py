"""How many threads minidl's pool, BLAS and oneDNN may run: the process's share of the cores.

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

While the pool (:mod:`minidl.compute.pool`) has several threads, BLAS has one, for the whole process
(:func:`limit_blas`, held by :mod:`minidl.compute.blas_threads`),
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
"""

import functools
import os

from minidl import config
from minidl.compute.blas_threads import blas

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
    """The process's share of the cores (:func:`cpu_share`), at most ``MAX_DEFAULT_THREADS``.

    Kernels cut a batch into at most four chunks (fewer for a recurrence),
    fixed by the shapes so that no bit depends on the thread count, so more
    pool threads would wait. A larger share goes to the OpenMP threads of
    each chunk's oneDNN call (:func:`minidl.compute.onednn.primitive.call_threads`),
    where the kernel's bits do not depend on their count, and to oneDNN's
    ``Dense`` products, which run outside the pool on the whole share. (A
    pool of one thread there, as before, left the kernels whose bits do
    depend on the count, 3x3 convolutions and recurrences among them, on one
    core.)
    """
    return min(cpu_share(), MAX_DEFAULT_THREADS)


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
    limit_blas(num_threads())


def hold_blas():
    """Hold BLAS to the threads it has while tasks run (one while the pool has several),
    now rather than at the next task split.

    For numpy or LAPACK work outside tasks that would otherwise run on BLAS's
    own threads: the QR of an Orthogonal initializer took 5 s instead of
    0.2 s for a GRU of 512 units on two busy cores, its threads waiting on
    each other.
    """
    limit_blas(num_threads())


@functools.lru_cache(maxsize=None)
def _usable_cpus():
    """Read once: every task split asks for the thread count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def limit_blas(pool_threads):
    """BLAS gets one thread while the pool has ``pool_threads`` > 1, else at most the
    process's share."""
    blas.limit(1 if pool_threads > 1 else cpu_share())
