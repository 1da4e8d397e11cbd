"""oneDNN 3.2's enum values and execution-argument indices (``dnnl_types.h``)."""

# dnnl_status_t
STATUS_NAMES = {1: 'out of memory', 2: 'invalid arguments', 3: 'unimplemented',
                4: 'last implementation reached', 5: 'runtime error', 6: 'not required'}

ENGINE_CPU = 1                 # dnnl_cpu
STREAM_DEFAULT_FLAGS = 1       # dnnl_stream_in_order
F32 = 3                        # dnnl_f32
FORMAT_ANY = 1                 # dnnl_format_tag_any
SCRATCHPAD_USER = 1            # dnnl_scratchpad_mode_user

# dnnl_prop_kind_t
FORWARD_TRAINING, FORWARD_INFERENCE = 64, 96
BACKWARD, BACKWARD_DATA, BACKWARD_WEIGHTS = 128, 160, 192

# dnnl_alg_kind_t
CONVOLUTION_DIRECT = 0x1
ELTWISE_RELU = 0x20
POOLING_MAX, POOLING_AVG_EXCLUDE_PADDING = 0x1ff, 0x3ff

# dnnl_rnn_direction_t, dnnl_rnn_flags_t
LEFT_TO_RIGHT, RIGHT_TO_LEFT = 1, 2
DIFF_WEIGHTS_OVERWRITE = 0x1

# dnnl_normalization_flags_t
USE_GLOBAL_STATS, USE_SCALE, USE_SHIFT = 0x1, 0x2, 0x4

# dnnl_query_t
QUERY_IMPL_INFO_STR = 8
QUERY_EXEC_ARG_MD = 255

# DNNL_ARG_* (an RNN's layer arguments are the plain ones: SRC is SRC_LAYER, ...)
SRC, DST, WEIGHTS, BIAS = 1, 17, 33, 41
SRC_ITER, SRC_ITER_C, DST_ITER, DST_ITER_C, WEIGHTS_ITER = 2, 3, 18, 19, 34
DIFF_SRC_ITER, DIFF_SRC_ITER_C, DIFF_DST_ITER, DIFF_DST_ITER_C = 130, 131, 146, 147
DIFF_WEIGHTS_ITER = 162
MEAN, VARIANCE, SCALE, SHIFT = 49, 50, 51, 52
WORKSPACE, SCRATCHPAD = 64, 80
DIFF_SRC, DIFF_DST, DIFF_WEIGHTS, DIFF_BIAS = 129, 145, 161, 169
DIFF_SCALE, DIFF_SHIFT = 255, 256
