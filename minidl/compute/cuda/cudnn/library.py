"""Finding and loading cuDNN 9's shared libraries.

cuDNN comes from the ``nvidia-cudnn-cu13`` wheel (part of ``minidl[gpu]``),
which installs only versioned libraries in ``site-packages/nvidia/cudnn/lib``;
the CUDA 13 libraries that cuDNN needs (cuBLASLt, NVRTC) sit beside it in
``site-packages/nvidia/cu13/lib``. The environment variable
``MINIDL_CUDNN_LIB_DIR`` names another directory holding ``libcudnn.so.9``
(a system or conda install) and replaces the search.

Everything is loaded from one directory, CUDA's libraries first and then
cuDNN's sub-libraries, with ``RTLD_GLOBAL``: ``libcudnn.so.9`` opens its
sub-libraries by name at run time and must find these, not another install's
(mixing two gives CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH).
"""

import ctypes
import importlib.util
import os
import pathlib

LIBRARY = 'libcudnn.so.9'
# Dependencies before dependants; libcudnn.so.9 itself comes last.
SUB_LIBRARIES = ('libcudnn_graph.so.9', 'libcudnn_engines_precompiled.so.9',
                 'libcudnn_engines_runtime_compiled.so.9', 'libcudnn_heuristic.so.9',
                 'libcudnn_ops.so.9', 'libcudnn_cnn.so.9', 'libcudnn_adv.so.9')
CUDA_LIBRARIES = ('libcublasLt.so.*', 'libcublas.so.*', 'libnvrtc-builtins.so.*', 'libnvrtc.so.*')
ENVIRONMENT_VARIABLE = 'MINIDL_CUDNN_LIB_DIR'
MINIMUM_VERSION = 90000  # cudnnGetVersion() of 9.0.0


class CudnnUnavailable(RuntimeError):
    """cuDNN cannot be used: its libraries are missing, fail to load, or are too old."""


def _wheel_directories():
    """``nvidia/cudnn/lib`` under every entry of the ``nvidia`` namespace package."""
    spec = importlib.util.find_spec('nvidia')
    roots = [] if spec is None else list(spec.submodule_search_locations or ())
    return [pathlib.Path(root) / 'cudnn' / 'lib' for root in roots]


def find_library_directory():
    """The directory to load cuDNN from.

    Raises:
        CudnnUnavailable: No searched directory holds ``libcudnn.so.9``; the
            message lists the directories and says how to install cuDNN.
    """
    override = os.environ.get(ENVIRONMENT_VARIABLE)
    candidates = [pathlib.Path(override)] if override else _wheel_directories()
    for directory in candidates:
        if (directory / LIBRARY).is_file():
            return directory
    searched = ', '.join(str(d) for d in candidates) or 'no nvidia/ package on sys.path'
    raise CudnnUnavailable(
        f'cuDNN 9 was not found: no {LIBRARY} in {searched}. Install it with '
        f"pip install nvidia-cudnn-cu13 (part of minidl's 'gpu' extra), or set "
        f'{ENVIRONMENT_VARIABLE} to a directory that holds {LIBRARY}')


def open_library(directory):
    """Load cuDNN and its dependencies from ``directory``; return ``libcudnn.so.9``.

    Raises:
        CudnnUnavailable: A library fails to load or cuDNN is older than 9.0.
    """
    directory = pathlib.Path(directory)
    cuda_directory = directory.parent.parent / 'cu13' / 'lib'
    paths = [path for pattern in CUDA_LIBRARIES for path in sorted(cuda_directory.glob(pattern))]
    paths += [directory / name for name in SUB_LIBRARIES if (directory / name).is_file()]
    try:
        for path in paths:
            ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        library = ctypes.CDLL(str(directory / LIBRARY), mode=ctypes.RTLD_GLOBAL)
        library.cudnnGetVersion.restype = ctypes.c_size_t
        version = library.cudnnGetVersion()
    except (OSError, AttributeError) as error:
        raise CudnnUnavailable(f'cuDNN in {directory} could not be loaded: {error}') from error
    if version < MINIMUM_VERSION:
        raise CudnnUnavailable(f'cuDNN in {directory} is version {version}; minidl needs 9.x')
    return library


_loaded = None  # the library, or the CudnnUnavailable raised when loading it


def library():
    """``libcudnn.so.9``, loaded on first use; the outcome is remembered for the process.

    Raises:
        CudnnUnavailable: cuDNN cannot be loaded (the same error every time).
    """
    global _loaded
    if _loaded is None:
        try:
            _loaded = open_library(find_library_directory())
        except CudnnUnavailable as error:
            _loaded = error
    if isinstance(_loaded, CudnnUnavailable):
        raise _loaded
    return _loaded
