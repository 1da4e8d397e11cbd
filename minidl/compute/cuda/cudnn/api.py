"""ctypes prototypes of the cuDNN functions minidl calls, with status checking.

Every function returns a ``cudnnStatus_t``; a non-zero status raises
:class:`CudnnError` with cuDNN's own message (``cudnnGetErrorString``), since
the numeric codes were renumbered in cuDNN 9. Handles, descriptors and
device pointers are passed as ``c_void_p``; enums as ``c_int``.

Signatures follow the cuDNN 9 API reference (legacy API for convolution,
pooling and batch norm; the v8 RNN API).
"""

import ctypes
import types

from minidl.compute.cuda.cudnn import library as cudnn_library

P, I, U, S, F, D = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_size_t,
                    ctypes.c_float, ctypes.c_double)
PP, PI, PS = ctypes.POINTER(P), ctypes.POINTER(I), ctypes.POINTER(S)

PROTOTYPES = {
    'cudnnCreate': [PP], 'cudnnDestroy': [P], 'cudnnSetStream': [P, P],
    # Descriptors
    'cudnnCreateTensorDescriptor': [PP], 'cudnnDestroyTensorDescriptor': [P],
    'cudnnSetTensor4dDescriptor': [P, I, I, I, I, I, I],
    'cudnnSetTensorNdDescriptor': [P, I, I, PI, PI],
    'cudnnGetTensorNdDescriptor': [P, I, PI, PI, PI, PI],
    'cudnnCreateFilterDescriptor': [PP], 'cudnnDestroyFilterDescriptor': [P],
    'cudnnSetFilter4dDescriptor': [P, I, I, I, I, I, I],
    'cudnnCreateConvolutionDescriptor': [PP], 'cudnnDestroyConvolutionDescriptor': [P],
    'cudnnSetConvolution2dDescriptor': [P, I, I, I, I, I, I, I, I],
    'cudnnSetConvolutionMathType': [P, I],
    'cudnnCreatePoolingDescriptor': [PP], 'cudnnDestroyPoolingDescriptor': [P],
    'cudnnSetPooling2dDescriptor': [P, I, I, I, I, I, I, I, I],
    'cudnnCreateDropoutDescriptor': [PP], 'cudnnDestroyDropoutDescriptor': [P],
    'cudnnSetDropoutDescriptor': [P, P, F, P, S, ctypes.c_ulonglong],
    'cudnnCreateRNNDescriptor': [PP], 'cudnnDestroyRNNDescriptor': [P],
    'cudnnSetRNNDescriptor_v8': [P, I, I, I, I, I, I, I, I, I, I, I, I, P, U],
    'cudnnCreateRNNDataDescriptor': [PP], 'cudnnDestroyRNNDataDescriptor': [P],
    'cudnnSetRNNDataDescriptor': [P, I, I, I, I, I, PI, P],
    # Convolution (perf-result arrays are passed as c_void_p)
    'cudnnGetConvolutionForwardAlgorithm_v7': [P, P, P, P, P, I, PI, P],
    'cudnnGetConvolutionBackwardDataAlgorithm_v7': [P, P, P, P, P, I, PI, P],
    'cudnnGetConvolutionBackwardFilterAlgorithm_v7': [P, P, P, P, P, I, PI, P],
    'cudnnGetConvolutionForwardWorkspaceSize': [P, P, P, P, P, I, PS],
    'cudnnGetConvolutionBackwardDataWorkspaceSize': [P, P, P, P, P, I, PS],
    'cudnnGetConvolutionBackwardFilterWorkspaceSize': [P, P, P, P, P, I, PS],
    'cudnnConvolutionForward': [P, P, P, P, P, P, P, I, P, S, P, P, P],
    'cudnnConvolutionBackwardData': [P, P, P, P, P, P, P, I, P, S, P, P, P],
    'cudnnConvolutionBackwardFilter': [P, P, P, P, P, P, P, I, P, S, P, P, P],
    # Pooling
    'cudnnPoolingForward': [P, P, P, P, P, P, P, P],
    'cudnnPoolingBackward': [P, P, P, P, P, P, P, P, P, P, P, P],
    # Batch normalization
    'cudnnDeriveBNTensorDescriptor': [P, P, I],
    'cudnnBatchNormalizationForwardTraining': [P, I, P, P, P, P, P, P, P, P, P, D, P, P, D, P, P],
    'cudnnBatchNormalizationForwardInference': [P, I, P, P, P, P, P, P, P, P, P, P, P, D],
    'cudnnBatchNormalizationBackward': [P, I, P, P, P, P, P, P, P, P, P, P, P, P, P, P, D, P, P],
    # RNN (v8)
    'cudnnGetRNNWeightSpaceSize': [P, P, PS],
    'cudnnGetRNNTempSpaceSizes': [P, P, I, P, PS, PS],
    'cudnnGetRNNWeightParams': [P, P, ctypes.c_int32, S, P, ctypes.c_int32, P, PP, P, PP],
    'cudnnRNNForward': [P, P, I, P, P, P, P, P, P, P, P, P, P, P, S, P, S, P, S, P],
    'cudnnRNNBackwardData_v8': [P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P,
                                S, P, S, P, S, P],
    'cudnnRNNBackwardWeights_v8': [P, P, I, P, P, P, P, P, P, P, S, P, S, P, S, P],
}


class CudnnError(RuntimeError):
    """A cuDNN call failed; the message names the function and cuDNN's reason."""


def _bind(library):
    library.cudnnGetErrorString.restype = ctypes.c_char_p
    library.cudnnGetErrorString.argtypes = [I]

    def check(status, function, arguments):
        if status != 0:
            reason = library.cudnnGetErrorString(status).decode()
            raise CudnnError(f'{function.__name__} failed: {reason} (status {status})')
        return status

    bound = {}
    for name, argtypes in PROTOTYPES.items():
        function = getattr(library, name)
        function.argtypes, function.restype, function.errcheck = argtypes, I, check
        bound[name.removeprefix('cudnn')] = function
    return types.SimpleNamespace(**bound)


_functions = None


def functions():
    """The bound functions, by name without the ``cudnn`` prefix (``functions().Create``).

    Raises:
        CudnnUnavailable: cuDNN cannot be loaded.
    """
    global _functions
    if _functions is None:
        _functions = _bind(cudnn_library.library())
    return _functions
