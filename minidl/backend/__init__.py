"""Keras 2's backend functions on minidl tensors: ``from minidl import backend as K``.

Custom layers, losses, metrics and Lambda functions written for Keras 2 run
unchanged: ``K.mean``, ``K.square``, ``K.concatenate``, ``K.epsilon()``, ...
take Tensors (and arrays or numbers) and return Tensors, differentiable
where Keras's are. Given symbolic tensors (from ``Input`` and layer calls),
every tensor function records a node of the graph instead, as on Keras 2's
TensorFlow backend, so ``Model(x, K.sum(K.square(x), axis=-1))`` works; so
do Python operators on symbolic tensors (see
:mod:`minidl.layers.operation`).

Modules: ``config`` (epsilon, floatx, image_data_format), ``variables``
(variables, placeholders, shapes, values, updates), ``math`` (elementwise,
comparisons, dot products), ``reductions``, ``shaping``, ``nn``
(activations, dropout, bias_add), ``crossentropy``, ``normalization``,
``convolution``, ``random``, ``control`` (switch, map_fn, folds), ``phase``
(the learning phase) and ``graph`` (function, gradients, clear_session).

``ctc`` has ``ctc_decode`` (``ctc_batch_cost`` is with the cross-entropies),
``recurrence`` Keras 2's ``rnn`` for custom recurrent layers.

Not provided, because minidl has no equivalent: sessions (``get_session``)
and sparse tensors (so ``ctc_label_dense_to_sparse``). Transposed, separable,
depthwise, 3-D and locally connected convolutions, 3-D pooling and bilinear
resizing exist as layers (``Conv2DTranspose``,
``UpSampling2D(interpolation='bilinear')``, ...) and as ``minidl.functions``,
not yet as backend functions.
"""

from minidl.backend.config import (
    backend, cast_to_floatx, epsilon, floatx, image_data_format, normalize_data_format,
    set_epsilon, set_floatx, set_image_data_format)
from minidl.backend.variables import (
    batch_get_value, batch_set_value, cast, constant, count_params, dtype, eval, eye,
    get_value, get_variable_shape, identity, int_shape, is_keras_tensor, is_placeholder,
    is_sparse, is_tensor, moving_average_update, ndim, ones, ones_like, placeholder, set_value,
    shape, to_dense, update, update_add, update_sub, variable, zeros, zeros_like)
from minidl.backend.math import (
    abs, batch_dot, clip, cos, dot, equal, exp, greater, greater_equal, less, less_equal, log,
    maximum, minimum, not_equal, pow, round, sign, sin, sqrt, square, transpose)
from minidl.backend.reductions import (
    all, any, argmax, argmin, cumprod, cumsum, logsumexp, max, mean, min, prod, std, sum, var)
from minidl.backend.shaping import (
    arange, batch_flatten, concatenate, expand_dims, flatten, gather, one_hot,
    permute_dimensions, repeat, repeat_elements, reshape, resize_images, resize_volumes, reverse,
    slice, spatial_2d_padding, spatial_3d_padding, squeeze, stack, temporal_padding, tile)
from minidl.backend.nn import (
    bias_add, dropout, elu, hard_sigmoid, in_top_k, l2_normalize, relu, sigmoid, softmax,
    softplus, softsign, tanh)
from minidl.backend.crossentropy import (
    binary_crossentropy, categorical_crossentropy, ctc_batch_cost,
    sparse_categorical_crossentropy)
from minidl.backend.ctc import ctc_decode
from minidl.backend.recurrence import rnn
from minidl.backend.normalization import batch_normalization, normalize_batch_in_training
from minidl.backend.convolution import conv1d, conv2d, pool2d
from minidl.backend.random import (
    random_binomial, random_normal, random_normal_variable, random_uniform,
    random_uniform_variable, truncated_normal)
from minidl.backend.control import foldl, foldr, map_fn, switch
from minidl.backend.phase import in_test_phase, in_train_phase, learning_phase, set_learning_phase
from minidl.backend.graph import (
    Function, clear_session, function, gradients, name_scope, print_tensor, stop_gradient)
