"""cuDNN 9 enum values used by the binding (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h,
cudnn_adv.h of cuDNN 9.x).

Checked against the cuDNN 9 API reference; the GPU test
``test_cudnn_kernels.py`` confirms them by comparing every kernel with the
plain-CuPy fallback.
"""

import numpy as np

SUCCESS = 0

# cudnnDataType_t
DATA_FLOAT, DATA_DOUBLE, DATA_HALF = 0, 1, 2
DATA_TYPES = {np.dtype('float32'): DATA_FLOAT, np.dtype('float64'): DATA_DOUBLE,
              np.dtype('float16'): DATA_HALF}

# cudnnTensorFormat_t
TENSOR_NCHW, TENSOR_NHWC = 0, 1

# cudnnMathType_t
DEFAULT_MATH, TENSOR_OP_MATH, TENSOR_OP_MATH_ALLOW_CONVERSION, FMA_MATH = 0, 1, 2, 3

# cudnnDeterminism_t
NON_DETERMINISTIC, DETERMINISTIC = 0, 1

# cudnnConvolutionMode_t
CROSS_CORRELATION = 1

# The deterministic algorithm of each direction used when cuDNN's list
# offers none that fits (cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t).
FWD_ALGO_IMPLICIT_PRECOMP_GEMM = 1
BWD_DATA_ALGO_1 = 1
BWD_FILTER_ALGO_1 = 1
# cuDNN documents these as non-deterministic: never chosen in deterministic mode.
BWD_DATA_NON_DETERMINISTIC = frozenset({0})        # BWD_DATA_ALGO_0
BWD_FILTER_NON_DETERMINISTIC = frozenset({0, 3})   # BWD_FILTER_ALGO_0, ALGO_3
ALGORITHM_COUNTS = {'forward': 8, 'backward_data': 6, 'backward_filter': 7}

# cudnnPoolingMode_t
POOLING_MAX, POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, POOLING_MAX_DETERMINISTIC = 0, 2, 3

# cudnnNanPropagation_t
NOT_PROPAGATE_NAN, PROPAGATE_NAN = 0, 1

# cudnnBatchNormMode_t
BATCHNORM_SPATIAL = 1
BN_MIN_EPSILON = 1e-5

# RNN (v8 API): cudnnRNNAlgo_t, cudnnRNNMode_t, cudnnRNNBiasMode_t,
# cudnnDirectionMode_t, cudnnRNNInputMode_t, cudnnForwardMode_t,
# cudnnRNNDataLayout_t, cudnnWgradMode_t, auxFlags
RNN_ALGO_STANDARD = 0
RNN_LSTM, RNN_GRU = 2, 3
RNN_NO_BIAS, RNN_SINGLE_INP_BIAS, RNN_DOUBLE_BIAS = 0, 1, 2
UNIDIRECTIONAL, BIDIRECTIONAL = 0, 1
LINEAR_INPUT = 0
FWD_MODE_INFERENCE, FWD_MODE_TRAINING = 0, 1
RNN_DATA_BATCH_MAJOR_UNPACKED = 2
WGRAD_MODE_ADD = 0
RNN_PADDED_IO_DISABLED, RNN_PADDED_IO_ENABLED = 0, 1
