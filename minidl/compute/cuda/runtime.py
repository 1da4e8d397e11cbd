"""CuPy and the GPU: import with clear errors, device selection, moves, workspace.

A GPU device is named by index ('gpu' is 'gpu:0'). Each check runs once per
process and index; the result (CuPy, or the error) is remembered, because
``Device.xp`` asks for it on every tensor created on a GPU.
"""

import functools
import os

_INSTALL_HINT = ("install minidl with the 'gpu' extra (pip install minidl[gpu]) "
                 "on a machine with an NVIDIA GPU and driver")


@functools.cache
def _check_gpu(index):
    """``(cupy, None, None)`` if GPU ``index`` can be used, else ``(None, message, cause)``."""
    # cuBLAS gives the same bits run to run only with a fixed workspace per stream
    # (NVIDIA's cuBLAS guide, "Results reproducibility"); it reads this when its
    # first handle is made, which CuPy does lazily, after this import. A user's
    # own setting wins.
    os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')
    try:
        import cupy
    except ImportError as error:
        return None, f"the 'gpu' device needs CuPy: {_INSTALL_HINT}", error
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as error:
        # No driver, no device, or a driver older than CuPy's CUDA: CuPy is
        # installed but cannot reach a GPU.
        return None, (f'CuPy is installed but no usable NVIDIA GPU was found (the CUDA '
                      f'runtime says: {error}); check the driver with nvidia-smi, or use '
                      f'the cpu device'), error
    if index >= count:
        return None, (f"device 'gpu:{index}' does not exist: this machine has {count} "
                      f'GPU(s)' + (f', gpu:0 to gpu:{count - 1}' if count else '')), None
    return cupy, None, None


def require_gpu(index=0):
    """Return the cupy module after checking that GPU ``index`` is usable.

    Raises:
        RuntimeError: CuPy is not installed (the message says how to install
            it), no GPU or driver is reachable, or there is no GPU ``index``.
    """
    cupy, message, cause = _check_gpu(index)
    if cupy is None:
        raise RuntimeError(message) from cause
    return cupy


def use_gpu(index):
    """Make GPU ``index`` the current CUDA device of this thread."""
    require_gpu(index).cuda.Device(index).use()


def to_gpu(array, index):
    """``array`` (numpy or CuPy, on any GPU) as a CuPy array on GPU ``index``.

    An array already there is returned as it is; one on another GPU is copied
    device to device.
    """
    cupy = require_gpu(index)
    if isinstance(array, cupy.ndarray) and array.device.id == index:
        return array
    with cupy.cuda.Device(index):
        # cupy.array copies (peer to peer from another GPU); asarray would
        # return an array of another GPU unchanged.
        return cupy.array(array, copy=True)


def current_stream_pointer():
    """The raw ``cudaStream_t`` of CuPy's current stream on the current device."""
    return require_gpu().cuda.get_current_stream().ptr


def current_device_index():
    """Index of the current CUDA device."""
    return require_gpu().cuda.runtime.getDevice()


def allocate(nbytes):
    """Device memory from CuPy's pool (a MemoryPointer; ``.ptr`` is 0 when empty).

    Memory freed back to the pool is reused by later work on the same stream
    only, so a workspace may be released right after the call that uses it is
    enqueued.
    """
    return require_gpu().cuda.alloc(nbytes)
