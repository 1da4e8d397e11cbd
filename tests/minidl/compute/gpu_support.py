"""Skips for tests that need a GPU, CuPy or cuDNN; shared by the backend tests."""

import pytest

from minidl.compute.cuda import runtime
from minidl.compute.cuda.cudnn import api
from minidl.compute.cuda.cudnn.library import CudnnUnavailable


def require_gpu():
    """The cupy module, or skip the test: no CuPy, no usable GPU."""
    try:
        return runtime.require_gpu()
    except RuntimeError as error:
        pytest.skip(str(error))


def cudnn_error():
    """Why cuDNN cannot be loaded in this process, or None when it can (no skip)."""
    try:
        api.functions()
    except CudnnUnavailable as error:
        return error
    return None


def require_cudnn():
    """The cupy module, or skip the test: no GPU, or cuDNN cannot be loaded."""
    cupy = require_gpu()
    error = cudnn_error()
    if error is not None:
        pytest.skip(str(error))
    return cupy


def cudnn_loads():
    """Whether cuDNN can be loaded in this process (no skip)."""
    return cudnn_error() is None
