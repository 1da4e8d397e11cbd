"""Choosing convolution algorithms: cuDNN's heuristics, deterministic results only.

``cudnnGetConvolution*Algorithm_v7`` lists algorithms from cuDNN's heuristics,
best first, each with its status, determinism and math type; nothing is run.
In deterministic mode (``config.deterministic``, the default) minidl keeps the
first result that succeeded, is marked deterministic, is not one that cuDNN's
documentation calls non-deterministic, and uses the descriptor's math type
(so no TF32 unless allowed). If none is left it uses the documented
deterministic fallback of that direction. ``cudnnFind*`` (which times
algorithms, so its choice can change from run to run) is never used.
"""

import ctypes

from minidl.compute.cuda.cudnn import api, constants


class AlgorithmPerformance(ctypes.Structure):
    """``cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t`` (one layout for all three)."""

    _fields_ = [('algo', ctypes.c_int), ('status', ctypes.c_int), ('time', ctypes.c_float),
                ('memory', ctypes.c_size_t), ('determinism', ctypes.c_int),
                ('mathType', ctypes.c_int), ('reserved', ctypes.c_int * 3)]


# Per direction: the v7 getter, the workspace-size query, the fallback and the
# algorithms documented as non-deterministic.
DIRECTIONS = {
    'forward': ('GetConvolutionForwardAlgorithm_v7', 'GetConvolutionForwardWorkspaceSize',
                constants.FWD_ALGO_IMPLICIT_PRECOMP_GEMM, frozenset()),
    'backward_data': ('GetConvolutionBackwardDataAlgorithm_v7',
                      'GetConvolutionBackwardDataWorkspaceSize',
                      constants.BWD_DATA_ALGO_1, constants.BWD_DATA_NON_DETERMINISTIC),
    'backward_filter': ('GetConvolutionBackwardFilterAlgorithm_v7',
                        'GetConvolutionBackwardFilterWorkspaceSize',
                        constants.BWD_FILTER_ALGO_1, constants.BWD_FILTER_NON_DETERMINISTIC),
}


def choose(direction, results, math_type, deterministic):
    """The algorithm to use among cuDNN's ``results`` (best first).

    Args:
        direction: 'forward', 'backward_data' or 'backward_filter'.
        results: AlgorithmPerformance entries returned by the v7 getter.
        math_type: The convolution descriptor's cudnnMathType_t.
        deterministic: Keep only algorithms with bitwise repeatable results.

    Returns:
        ``(algorithm, deterministic)``: the cudnnConvolution*Algo_t value and
        whether cuDNN marked it deterministic (the fallbacks are, by cuDNN's
        documentation).
    """
    _, _, fallback, non_deterministic = DIRECTIONS[direction]
    for result in results:
        if result.status != constants.SUCCESS or result.mathType not in (math_type,
                                                                          constants.FMA_MATH):
            continue
        marked = result.determinism == constants.DETERMINISTIC
        if deterministic and (not marked or result.algo in non_deterministic):
            continue
        return result.algo, marked
    return fallback, True


def select(direction, handle, descriptors, math_type, deterministic):
    """Ask cuDNN's heuristics and choose; returns ``(algorithm, deterministic, workspace bytes)``.

    Args:
        direction: 'forward', 'backward_data' or 'backward_filter'.
        handle: The cuDNN handle.
        descriptors: The four descriptors in the getter's order (forward:
            x, w, conv, y; backward data: w, dy, conv, dx; backward filter:
            x, dy, conv, dw).
        math_type: The convolution descriptor's math type.
        deterministic: As for :func:`choose`.
    """
    getter, workspace_query, _, _ = DIRECTIONS[direction]
    functions = api.functions()
    capacity = constants.ALGORITHM_COUNTS[direction]
    results = (AlgorithmPerformance * capacity)()
    returned = ctypes.c_int()
    values = [d.value for d in descriptors]
    getattr(functions, getter)(handle, *values, capacity, ctypes.byref(returned), results)
    algorithm, marked = choose(direction, results[:returned.value], math_type, deterministic)
    workspace = ctypes.c_size_t()
    getattr(functions, workspace_query)(handle, *values, algorithm, ctypes.byref(workspace))
    return algorithm, marked, workspace.value
