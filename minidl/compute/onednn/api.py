"""ctypes prototypes of the oneDNN functions minidl calls, with status checking.

Functions that return a ``dnnl_status_t`` raise :class:`OnednnError` naming
the function and the status when it is not ``dnnl_success``. Handles
(engines, streams, memory descriptors, primitive descriptors, primitives,
memories, attributes) are ``c_void_p``; ``dnnl_dims_t`` is an array of 12
``int64``; enums and flags are ``c_int`` / ``c_uint``.
"""

import ctypes
import types

from minidl.compute.onednn import constants
from minidl.compute.onednn import library as onednn_library

MAX_DIMS = 12  # DNNL_MAX_NDIMS
Dims = ctypes.c_int64 * MAX_DIMS

P, I, U, S, F = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_float
PP = ctypes.POINTER(P)


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``: an argument index and the memory bound to it."""

    _fields_ = [('arg', ctypes.c_int), ('memory', ctypes.c_void_p)]


PROTOTYPES = {
    'engine_create': [PP, I, S], 'stream_create': [PP, P, U], 'stream_wait': [P],
    'primitive_attr_create': [PP], 'primitive_attr_destroy': [P],
    'primitive_attr_set_scratchpad_mode': [P, I],
    'memory_desc_create_with_strides': [PP, I, Dims, I, Dims],
    'memory_desc_create_with_tag': [PP, I, Dims, I, I],
    'memory_desc_destroy': [P],
    'memory_create': [PP, P, P, P], 'memory_destroy': [P], 'memory_set_data_handle': [P, P],
    'primitive_desc_query': [P, I, I, P], 'primitive_desc_destroy': [P],
    'primitive_create': [PP, P], 'primitive_destroy': [P],
    'primitive_execute': [P, P, I, ctypes.POINTER(ExecArg)],
    'reorder_primitive_desc_create': [PP, P, P, P, P, P],
    'convolution_forward_primitive_desc_create': [PP, P, I, I, P, P, P, P, Dims, Dims, Dims,
                                                  Dims, P],
    'convolution_backward_data_primitive_desc_create': [PP, P, I, P, P, P, Dims, Dims, Dims,
                                                        Dims, P, P],
    'convolution_backward_weights_primitive_desc_create': [PP, P, I, P, P, P, P, Dims, Dims,
                                                           Dims, Dims, P, P],
    'pooling_forward_primitive_desc_create': [PP, P, I, I, P, P, Dims, Dims, Dims, Dims, Dims,
                                              P],
    'pooling_backward_primitive_desc_create': [PP, P, I, P, P, Dims, Dims, Dims, Dims, Dims,
                                               P, P],
    'batch_normalization_forward_primitive_desc_create': [PP, P, I, P, P, F, U, P],
    'lstm_forward_primitive_desc_create': [PP, P, I, I] + [P] * 11 + [U, P],
    'lstm_backward_primitive_desc_create': [PP, P, I, I] + [P] * 22 + [U, P, P],
    'lbr_gru_forward_primitive_desc_create': [PP, P, I, I] + [P] * 7 + [U, P],
    'lbr_gru_backward_primitive_desc_create': [PP, P, I, I] + [P] * 14 + [U, P, P],
    'batch_normalization_backward_primitive_desc_create': [PP, P, I, P, P, P, F, U, P, P],
    'matmul_primitive_desc_create': [PP, P, P, P, P, P, P],
    'post_ops_create': [PP], 'post_ops_destroy': [P],
    'post_ops_append_eltwise': [P, I, F, F], 'primitive_attr_set_post_ops': [P, P],
}


class OnednnError(RuntimeError):
    """A oneDNN call failed; the message names the function and the status."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _bind(library):
    def check(status, function, arguments):
        if status != 0:
            reason = constants.STATUS_NAMES.get(status, 'unknown status')
            raise OnednnError(f'{function.__name__} failed: {reason} (status {status})', status)
        return status

    bound = {}
    for name, argtypes in PROTOTYPES.items():
        function = getattr(library, f'dnnl_{name}')
        function.argtypes, function.restype, function.errcheck = argtypes, I, check
        bound[name] = function
    bound.update(_holding_the_gil(library))
    return types.SimpleNamespace(**bound)


def _holding_the_gil(library):
    """Calls that run every time a primitive runs, bound to keep the GIL.

    They take well under a microsecond; a ctypes call through ``CDLL``
    releases the GIL around it, and a thread of minidl's pool that takes the
    GIL meanwhile makes the caller wait for it back, so each of these could
    cost as much as a short kernel. Waiting on a CPU stream returns at once:
    with oneDNN's OpenMP runtime (the one minidl loads) a primitive has
    finished when ``primitive_execute`` returns. The ``*_status`` calls are
    not checked by ctypes (their status is returned, for the caller to check
    with :func:`raise_for_status`: an errcheck costs a Python call); the
    queries return values, not a status.
    """
    holding = ctypes.PyDLL(library._name, handle=library._handle)
    prototypes = {'memory_set_data_handle': ([P, P], I), 'stream_wait': ([P], I),
                  'memory_desc_get_size': ([P], S), 'memory_desc_equal': ([P, P], I),
                  'primitive_desc_query_md': ([P, I, I], P)}
    bound = {}
    for name, (argtypes, restype) in prototypes.items():
        function = getattr(holding, f'dnnl_{name}')
        function.argtypes, function.restype = argtypes, restype
        bound[name] = function
    for name in ('memory_set_data_handle', 'stream_wait'):
        bound[f'{name}_status'] = bound.pop(name)
    return bound


def raise_for_status(name, status):
    """Raise :class:`OnednnError` for a failed call of ``dnnl_<name>`` (status not 0)."""
    if status != 0:
        reason = constants.STATUS_NAMES.get(status, 'unknown status')
        raise OnednnError(f'dnnl_{name} failed: {reason} (status {status})', status)


_functions = None


def functions():
    """The bound functions, by name without the ``dnnl_`` prefix (``functions().stream_wait``).

    Raises:
        OnednnUnavailable: oneDNN cannot be loaded.
    """
    global _functions
    if _functions is None:
        _functions = _bind(onednn_library.library())
    return _functions


def dims(values):
    """A ``dnnl_dims_t`` holding ``values`` (the rest zero)."""
    return Dims(*values)
