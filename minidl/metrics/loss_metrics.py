"""Metrics that average a loss function per sample, and the root mean squared error.

Each class is a :class:`MeanMetricWrapper` around the function of
``minidl.losses`` with the same formula; the metric takes the loss's options
(``from_logits``, ``label_smoothing``, ...) after ``name`` and ``dtype``, in
Keras's order. ``cosine_similarity`` is the one that differs from its loss:
as a metric it is the similarity itself, not its negative.
"""

import math

from minidl import losses
from minidl.losses.inputs import prepare
from minidl.metrics.base import Mean, MeanMetricWrapper
from minidl.tensor import no_grad


def cosine_similarity(y_true, y_pred, axis=-1):
    """Cosine similarity along ``axis``: 1 for parallel vectors, 0 for orthogonal ones."""
    return -losses.cosine_similarity(y_true, y_pred, axis=axis)


class _FunctionMetric(MeanMetricWrapper):
    """The mean of ``function``, which takes no options."""

    function = None
    default_name = None

    def __init__(self, name=None, dtype=None):
        super().__init__(type(self).function, name or self.default_name, dtype)


class MeanSquaredError(_FunctionMetric):
    """The mean of :func:`minidl.losses.mean_squared_error`."""
    function, default_name = staticmethod(losses.mean_squared_error), 'mean_squared_error'


class MeanAbsoluteError(_FunctionMetric):
    """The mean of :func:`minidl.losses.mean_absolute_error`."""
    function, default_name = staticmethod(losses.mean_absolute_error), 'mean_absolute_error'


class MeanAbsolutePercentageError(_FunctionMetric):
    """The mean of :func:`minidl.losses.mean_absolute_percentage_error`."""
    function = staticmethod(losses.mean_absolute_percentage_error)
    default_name = 'mean_absolute_percentage_error'


class MeanSquaredLogarithmicError(_FunctionMetric):
    """The mean of :func:`minidl.losses.mean_squared_logarithmic_error`."""
    function = staticmethod(losses.mean_squared_logarithmic_error)
    default_name = 'mean_squared_logarithmic_error'


class Hinge(_FunctionMetric):
    """The mean of :func:`minidl.losses.hinge`."""
    function, default_name = staticmethod(losses.hinge), 'hinge'


class SquaredHinge(_FunctionMetric):
    """The mean of :func:`minidl.losses.squared_hinge`."""
    function, default_name = staticmethod(losses.squared_hinge), 'squared_hinge'


class CategoricalHinge(_FunctionMetric):
    """The mean of :func:`minidl.losses.categorical_hinge`."""
    function, default_name = staticmethod(losses.categorical_hinge), 'categorical_hinge'


class KLDivergence(_FunctionMetric):
    """The mean of :func:`minidl.losses.kl_divergence`."""
    function, default_name = staticmethod(losses.kl_divergence), 'kullback_leibler_divergence'


class Poisson(_FunctionMetric):
    """The mean of :func:`minidl.losses.poisson`."""
    function, default_name = staticmethod(losses.poisson), 'poisson'


class LogCoshError(_FunctionMetric):
    """The mean of :func:`minidl.losses.log_cosh`."""
    function, default_name = staticmethod(losses.log_cosh), 'logcosh'


class CosineSimilarity(MeanMetricWrapper):
    """The mean of :func:`cosine_similarity` (the similarity, not the loss's negative)."""

    def __init__(self, name='cosine_similarity', dtype=None, axis=-1):
        super().__init__(cosine_similarity, name, dtype, axis=axis)


class CategoricalCrossentropy(MeanMetricWrapper):
    """The mean of :func:`minidl.losses.categorical_crossentropy`."""

    def __init__(self, name='categorical_crossentropy', dtype=None, from_logits=False,
                 label_smoothing=0.0):
        super().__init__(losses.categorical_crossentropy, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The mean of :func:`minidl.losses.sparse_categorical_crossentropy`."""

    def __init__(self, name='sparse_categorical_crossentropy', dtype=None, from_logits=False):
        super().__init__(losses.sparse_categorical_crossentropy, name, dtype,
                         from_logits=from_logits)


class BinaryCrossentropy(MeanMetricWrapper):
    """The mean of :func:`minidl.losses.binary_crossentropy`."""

    def __init__(self, name='binary_crossentropy', dtype=None, from_logits=False,
                 label_smoothing=0.0):
        super().__init__(losses.binary_crossentropy, name, dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the weighted mean of the elementwise squared errors.

    ``update_state(y_true, y_pred, sample_weight=None)``; the totals are
    those of the mean squared error, so they add up across shards.
    """

    def __init__(self, name='root_mean_squared_error', dtype=None):
        super().__init__(name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        with no_grad():
            y_true, y_pred = prepare(self.name, y_true, y_pred)
        error = y_pred.data - y_true.data
        super().update_state(error * error, sample_weight)

    def result_of(self, totals):
        return math.sqrt(super().result_of(totals))
