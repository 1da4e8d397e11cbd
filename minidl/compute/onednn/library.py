"""Finding and loading oneDNN's shared library.

oneDNN comes from the ``onednn-cpu-gomp`` wheel (minidl's ``onednn`` extra):
oneDNN 3.2 built for the CPU with GNU OpenMP, which needs nothing but the
system's ``libgomp.so.1``. The wheel installs ``libdnnl.so.3`` in the
environment's ``lib/`` directory (``<sys.prefix>/lib``), not inside a Python
package. The environment variable ``MINIDL_ONEDNN_LIB_DIR`` names another
directory holding ``libdnnl.so.3`` and replaces the search.

(The newer ``onednn`` wheel is a SYCL build whose library needs Intel's TBB,
SVML and SYCL runtimes, about ten times the download, for nothing a CPU run
uses; the GOMP build is the one minidl binds.)

How long oneDNN's idle OpenMP threads spin: after a parallel call, GNU
OpenMP's threads spin for the next one, by default about 10 ms here (2-core
AMD EPYC), before they sleep; a sleeping thread takes 0.1 ms or more to
wake. A product on two threads (:mod:`~minidl.compute.onednn.matmul`) wants
them awake, as the next product of a step comes tens of microseconds later;
but minidl's pool may run tasks next, and a spinning thread takes part of a
core from them while it spins (with the default, an LSTM step next to a
dense layer, W6 of the benchmarks, took 1.5 times as long). So libgomp is
loaded with ``GOMP_SPINCOUNT`` at ``SPIN_COUNT``: about 0.3 ms of spinning,
enough for the products of a multilayer perceptron's step to find the
threads awake. A ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY`` the user set is
kept, and the variable is removed again once libgomp has read it (child
processes do not inherit it); a libgomp that another library loaded first
keeps its own setting.
"""

import contextlib
import ctypes
import functools
import os
import pathlib
import sys

LIBRARY = 'libdnnl.so.3'
OPENMP_LIBRARY = 'libgomp.so.1'
ENVIRONMENT_VARIABLE = 'MINIDL_ONEDNN_LIB_DIR'
MINIMUM_VERSION = (3, 2)
SPIN_COUNT = 10000  # GOMP_SPINCOUNT: about 0.3 ms (its default, 300000, about 10 ms)
CPU_RUNTIME_OPENMP = 2  # dnnl_version_t.cpu_runtime of an OpenMP build (DNNL_RUNTIME_OMP)


class OnednnUnavailable(RuntimeError):
    """oneDNN cannot be used: its library is missing, fails to load, or is too old."""


class _Version(ctypes.Structure):
    _fields_ = [('major', ctypes.c_int), ('minor', ctypes.c_int), ('patch', ctypes.c_int),
                ('hash', ctypes.c_char_p), ('cpu_runtime', ctypes.c_uint),
                ('gpu_runtime', ctypes.c_uint)]


def find_library_directory():
    """The directory to load oneDNN from.

    Raises:
        OnednnUnavailable: No searched directory holds ``libdnnl.so.3``; the
            message lists the directories and says how to install oneDNN.
    """
    override = os.environ.get(ENVIRONMENT_VARIABLE)
    candidates = [pathlib.Path(override)] if override else [
        pathlib.Path(prefix) / 'lib' for prefix in dict.fromkeys((sys.prefix, sys.base_prefix))]
    for directory in candidates:
        if (directory / LIBRARY).is_file():
            return directory
    raise OnednnUnavailable(
        f'oneDNN 3 was not found: no {LIBRARY} in {", ".join(map(str, candidates))}. '
        f"Install it with pip install onednn-cpu-gomp (minidl's 'onednn' extra), or set "
        f'{ENVIRONMENT_VARIABLE} to a directory that holds {LIBRARY}')


def open_library(directory):
    """Load ``libdnnl.so.3`` from ``directory`` and check its version.

    Raises:
        OnednnUnavailable: It fails to load, is older than 3.2 or is not an
            OpenMP build.
    """
    path = pathlib.Path(directory) / LIBRARY
    try:
        with _spin_count():
            library = ctypes.CDLL(str(path))
        library.dnnl_version.restype = ctypes.POINTER(_Version)
        version = library.dnnl_version().contents
    except (OSError, AttributeError) as error:
        raise OnednnUnavailable(f'oneDNN in {directory} could not be loaded: {error}') from error
    found = (version.major, version.minor, version.patch)
    if found[:2] < MINIMUM_VERSION:
        raise OnednnUnavailable(f'oneDNN in {directory} is version {found}; minidl needs 3.2+')
    if version.cpu_runtime != CPU_RUNTIME_OPENMP:
        raise OnednnUnavailable(f'oneDNN in {directory} is not an OpenMP build (cpu runtime '
                                f'{version.cpu_runtime}); minidl binds the GOMP build')
    library.version = found
    return library


@contextlib.contextmanager
def _spin_count():
    """``GOMP_SPINCOUNT`` set to ``SPIN_COUNT`` while libgomp loads (and reads it), unless
    the user chose how its threads wait."""
    if 'GOMP_SPINCOUNT' in os.environ or 'OMP_WAIT_POLICY' in os.environ:
        yield
        return
    os.environ['GOMP_SPINCOUNT'] = str(SPIN_COUNT)
    try:
        yield
    finally:
        del os.environ['GOMP_SPINCOUNT']


@functools.lru_cache(maxsize=None)
def library():
    """The loaded ``libdnnl.so.3`` (found and loaded once; its ``version`` attribute is set).

    Raises:
        OnednnUnavailable: As :func:`find_library_directory` and :func:`open_library`.
    """
    return open_library(find_library_directory())


@functools.lru_cache(maxsize=None)
def openmp():
    """The GNU OpenMP runtime oneDNN runs its threads on (the process's ``libgomp.so.1``)."""
    library()  # loads libgomp as its dependency, so this is the copy oneDNN uses
    runtime = ctypes.CDLL(OPENMP_LIBRARY)
    runtime.omp_set_num_threads.argtypes = [ctypes.c_int]
    runtime.omp_get_max_threads.restype = ctypes.c_int
    return runtime
