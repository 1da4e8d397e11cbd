"""Keras 2's metrics, with states of exact sums that add up across processes.

Modules: ``base`` (Metric, Mean, Sum, MeanMetricWrapper and the state
interface ``totals`` / ``result_of``), ``accuracy_metrics`` (accuracy
functions and classes), ``loss_metrics`` (means of loss functions,
RootMeanSquaredError) and ``registry`` (``get`` / ``serialize`` / ``deserialize``). The loss
functions are metric functions too (``minidl.metrics.mse`` is
``minidl.losses.mse``), except ``cosine_similarity``, which is positive here
(Keras 2's ``cosine_proximity`` / ``cosine`` metric is the loss, negative).
"""

from minidl.losses import (
    KLD, MAE, MAPE, MSE, MSLE, binary_crossentropy, categorical_crossentropy, categorical_hinge,
    cosine, cosine_proximity, hinge, kl_divergence, kld, kullback_leibler_divergence, log_cosh,
    logcosh, mae, mape, mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
    mean_squared_logarithmic_error, mse, msle, poisson, sparse_categorical_crossentropy,
    squared_hinge)
from minidl.metrics.accuracy_metrics import (
    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy, accuracy, binary_accuracy,
    categorical_accuracy, sparse_categorical_accuracy, sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy)
from minidl.metrics.base import Mean, MeanMetricWrapper, Metric, Sum, weighted_sum_and_weight
from minidl.metrics.loss_metrics import (
    BinaryCrossentropy, CategoricalCrossentropy, CategoricalHinge, CosineSimilarity, Hinge,
    KLDivergence, LogCoshError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
    MeanSquaredLogarithmicError, Poisson, RootMeanSquaredError, SparseCategoricalCrossentropy,
    SquaredHinge, cosine_similarity)
from minidl.metrics.registry import deserialize, get, serialize
