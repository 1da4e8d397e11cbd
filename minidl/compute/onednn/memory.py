"""Memory descriptors and memories: numpy arrays as oneDNN sees them.

oneDNN names every tensor's axes in a fixed *logical* order (data N, C, H, W;
convolution weights O, I, H, W) and lets any physical layout stand behind
them through strides. minidl's arrays are described as they lie, with no
copy: an NHWC image batch is logical (N, C, H, W) with strides
(HWC, 1, WC, C), and a Keras kernel (kh, kw, in, out) is logical
(out, in, kh, kw) with strides (1, out, kw*in*out, in*out). A primitive may
prefer a blocked layout of its own for an operand (``FORMAT_ANY`` lets it
choose); :class:`~minidl.compute.onednn.primitive.Primitive` reorders to and
from it.
"""

import ctypes

import numpy as np

from minidl.compute.onednn import api, constants


class Descriptor:
    """A ``dnnl_memory_desc_t`` this object owns (destroyed with it)."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if self.handle is not None and api is not None:  # api is None at interpreter exit
            api.functions().memory_desc_destroy(self.handle)
            self.handle = None


def strided(dims, strides):
    """A float32 descriptor of logical ``dims`` with element ``strides``."""
    handle = ctypes.c_void_p()
    api.functions().memory_desc_create_with_strides(
        ctypes.byref(handle), len(dims), api.dims(dims), constants.F32, api.dims(strides))
    return Descriptor(handle)


def of_array(array, axes):
    """The descriptor of ``array`` read in logical axis order ``axes`` (numpy axes).

    ``of_array(x, (0, 3, 1, 2))`` is an NHWC batch as oneDNN's (N, C, H, W).
    """
    itemsize = array.dtype.itemsize
    return strided([array.shape[a] for a in axes], [array.strides[a] // itemsize for a in axes])


def of_shape(shape, axes):
    """:func:`of_array` for a C-contiguous float32 array of ``shape`` (none made)."""
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1]
    return strided([shape[a] for a in axes], [int(strides[a]) for a in axes])


def any_format(dims):
    """A float32 descriptor of logical ``dims`` whose layout the primitive chooses."""
    handle = ctypes.c_void_p()
    api.functions().memory_desc_create_with_tag(
        ctypes.byref(handle), len(dims), api.dims(dims), constants.F32, constants.FORMAT_ANY)
    return Descriptor(handle)


def size(descriptor_handle):
    """Bytes that memory of this descriptor takes."""
    return api.functions().memory_desc_get_size(descriptor_handle)


def equal(a_handle, b_handle):
    """Whether two descriptors describe the same layout."""
    return bool(api.functions().memory_desc_equal(a_handle, b_handle))


def buffer(nbytes):
    """A 64-byte-aligned uint8 numpy buffer of ``nbytes`` (oneDNN's blocked layouts and
    scratchpads are read with aligned vector loads)."""
    raw = np.empty(nbytes + 64, np.uint8)
    start = -address(raw) % 64
    return raw[start:start + nbytes]


class _ArrayHead(ctypes.Structure):
    """The start of a numpy array object (``PyArrayObject_fields`` in numpy's
    ``ndarraytypes.h``): Python's object header, then the pointer to the data."""

    _fields_ = [('refcount', ctypes.c_ssize_t), ('type', ctypes.c_void_p),
                ('data', ctypes.c_void_p)]


def address(array):
    """The address of the first element of the numpy array ``array``.

    ``array.ctypes.data`` makes a helper object each time: about 1 us, and a
    primitive's call reads three to five addresses. An ndarray's own struct
    holds the pointer right after the object header; that is read directly,
    where :data:`_HEAD_HOLDS_DATA` found the layout as expected (a Python
    built with a larger object header, for one, is not: it keeps ``.ctypes``).
    """
    if type(array) is np.ndarray and _HEAD_HOLDS_DATA:
        return _ArrayHead.from_address(id(array)).data or 0
    return array.ctypes.data


def _head_holds_data():
    probes = [np.empty(7, np.float32), np.arange(24.0).reshape(4, 6)[1:, 2:].T]
    return all(_ArrayHead.from_address(id(probe)).data == probe.ctypes.data
               for probe in probes)


_HEAD_HOLDS_DATA = _head_holds_data()
