"""Per-device cuDNN state: the handle on CuPy's current stream, scalars, plans.

cuDNN wants one handle per GPU; each call first points it at CuPy's current
stream, so cuDNN work is ordered with CuPy's kernels on that stream and its
workspace (from CuPy's pool, which reuses memory per stream) is safe to free
as soon as the call is enqueued. Handles live as long as the process.

A *plan* is everything a kernel prepares for one configuration and shape:
descriptors and chosen algorithms. Plans are cached per device under a key
that holds every input of their preparation, including the switches of
``minidl.config`` that change the algorithms chosen.
"""

import ctypes

from minidl import config
from minidl.compute.cuda import runtime
from minidl.compute.cuda.cudnn import api, constants

_handles = {}
_plans = {}

# alpha = 1 and beta = 0 for cuDNN's "y = alpha * op(x) + beta * y": float
# scalars for float and half data, double scalars for double data. Module
# constants, so their addresses stay valid.
_FLOAT_ONE, _FLOAT_ZERO = ctypes.c_float(1.0), ctypes.c_float(0.0)
_DOUBLE_ONE, _DOUBLE_ZERO = ctypes.c_double(1.0), ctypes.c_double(0.0)


def handle():
    """The current device's cuDNN handle, set to CuPy's current stream."""
    functions = api.functions()
    index = runtime.current_device_index()
    if index not in _handles:
        value = ctypes.c_void_p()
        functions.Create(ctypes.byref(value))
        _handles[index] = value
    functions.SetStream(_handles[index], runtime.current_stream_pointer())
    return _handles[index]


def data_type(dtype):
    """The cudnnDataType_t of a numpy dtype (float16, float32 or float64)."""
    return constants.DATA_TYPES[dtype]


def compute_type(dtype):
    """The type cuDNN accumulates in: double for double data, else float."""
    return constants.DATA_DOUBLE if dtype.itemsize == 8 else constants.DATA_FLOAT


def math_type(dtype):
    """FMA math for float32 unless ``config.allow_tf32``: it keeps TF32 tensor cores off."""
    if dtype.itemsize == 4 and not config.allow_tf32:
        return constants.FMA_MATH
    return constants.DEFAULT_MATH


def scalars(dtype):
    """Addresses of (1, 0) in the scalar type cuDNN expects for ``dtype`` data."""
    one, zero = (_DOUBLE_ONE, _DOUBLE_ZERO) if dtype.itemsize == 8 else (_FLOAT_ONE, _FLOAT_ZERO)
    return ctypes.addressof(one), ctypes.addressof(zero)


def pointer(array):
    """Device address of a CuPy array, or None (NULL) for None."""
    return None if array is None else array.data.ptr


def plan_key(kind, device_index, *parts):
    """The cache key of a plan: its kind, its GPU, the configuration switches that
    change the algorithms chosen, and ``parts`` (shapes, dtype, options)."""
    return (kind, device_index, bool(config.deterministic), bool(config.allow_tf32)) + parts


def cached_plan(key, make):
    """The plan stored under ``key``, made by ``make()`` the first time."""
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = make()
    return plan
