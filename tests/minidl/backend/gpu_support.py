"""Skips for tests that need a GPU, CuPy or cuDNN; shared by the backend tests."""

import pytest


def require_gpu():
    """The cupy module, or skip the test: no CuPy, no usable GPU."""
    cupy = pytest.importorskip('cupy')
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except cupy.cuda.runtime.CUDARuntimeError:
        pass
    pytest.skip('no usable GPU')


def require_cudnn():
    """The cupy module, or skip the test: no GPU, or cuDNN cannot be loaded."""
    cupy = require_gpu()
    from minidl.backend.cuda.cudnn import api
    from minidl.backend.cuda.cudnn.library import CudnnUnavailable
    try:
        api.functions()
    except CudnnUnavailable as error:
        pytest.skip(str(error))
    return cupy


def cudnn_loads():
    """Whether cuDNN can be loaded in this process (no skip)."""
    from minidl.backend.cuda.cudnn import api
    from minidl.backend.cuda.cudnn.library import CudnnUnavailable
    try:
        api.functions()
    except CudnnUnavailable:
        return False
    return True
