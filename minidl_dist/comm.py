"""The job's processes: start-up, rank, size, local rank, and each rank's GPU.

``init()`` joins the MPI job that ``mpirun -np N`` started; run as a plain
process it is a job of size 1, so the same script runs both ways. The
ranks on one host are numbered by ``local_rank()``, and on a host with GPUs
rank ``r`` uses GPU ``local_rank % n_gpus``. MPI here is not CUDA-aware
(the ``mpich`` wheel), so data for collectives is staged through host
memory (:func:`to_host`, :func:`from_host`).
"""

import atexit

try:
    from mpi4py import MPI
except ImportError as error:
    raise ImportError("minidl_dist needs mpi4py and an MPI library: pip install 'minidl[dist]' "
                      '(mpi4py and the mpich wheel; mpirun lands in the venv\'s bin/)') from error

from minidl import Device, set_default_device
from minidl.compute import get_array_module, threads, to_numpy
from minidl_dist import ending, failfast, watchdog

_job = {}


def init(use_gpu=True, timeout=None):
    """Join the job (once; later calls do nothing).

    With more than one rank and without the launcher (``python -m
    minidl_dist``, which has done it before the script), installs fail-fast
    handling (:mod:`minidl_dist.failfast`: an uncaught exception on any
    rank aborts the job), the agreement on the end of the script
    (:mod:`minidl_dist.ending`: a rank that ends while another waits for it
    aborts the job) and the collective timeout (:mod:`minidl_dist.watchdog`).
    On a host with GPUs, makes this rank's GPU minidl's default device.

    Args:
        use_gpu: Whether to pick a GPU when there is one.
        timeout: Seconds a rank may wait for the others in one collective
            before it aborts the job; None takes the environment variable
            ``MINIDL_DIST_TIMEOUT``, else 300.

    Raises:
        ValueError: If the timeout is not a positive number of seconds.
    """
    if _job:
        return
    seconds = watchdog.resolve_timeout(timeout)
    world = MPI.COMM_WORLD
    if world.Get_size() > 1:
        if ending.started():  # by the launcher, with the environment's timeout
            watchdog.set_timeout(seconds)
        else:
            failfast.install(world)
            ending.start(world, seconds)
            atexit.register(ending.finish, 'ended its script (by its end or by a SystemExit: '
                                           'python -m minidl_dist tells which)')
    # Ranks sharing memory are on one host; their order within it is the local rank.
    with watchdog.waiting('finding the ranks on each host'):
        host = world.Split_type(MPI.COMM_TYPE_SHARED, key=world.Get_rank())
    _job.update(world=world, rank=world.Get_rank(), size=world.Get_size(),
                local_rank=host.Get_rank(), local_size=host.Get_size())
    host.Free()
    threads.set_ranks_on_host(_job['local_size'])  # each rank's threads (BLAS's too) take its share
    count = gpu_count() if use_gpu else 0
    if count:
        index = _job['local_rank'] % count
        Device('gpu').xp.cuda.Device(index).use()
        set_default_device(f'gpu:{index}')


def _get(key):
    if not _job:
        raise RuntimeError('minidl_dist is not initialised: call minidl_dist.init() first')
    return _job[key]


def rank():
    """This process's number in the job, 0 to size() - 1."""
    return _get('rank')


def size():
    """Number of processes in the job."""
    return _get('size')


def local_rank():
    """This process's number among the job's processes on its host."""
    return _get('local_rank')


def local_size():
    """Number of the job's processes on this host."""
    return _get('local_size')


def world():
    """The mpi4py communicator of the whole job."""
    return _get('world')


def gpu_count():
    """Number of GPUs this process can see (0 without CuPy or without a GPU)."""
    try:
        return Device('gpu').xp.cuda.runtime.getDeviceCount()
    except RuntimeError:  # no CuPy (minidl's message), or CUDA finds no device
        return 0


def to_host(array):
    """``array`` as a numpy array (a copy from GPU memory; numpy arrays as they are)."""
    return to_numpy(array)


def from_host(host_array, like):
    """``host_array`` on the device of the array ``like`` (no copy for numpy)."""
    return get_array_module(like).asarray(host_array)
