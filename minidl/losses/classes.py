"""Keras's Loss classes: each wraps its per-sample function with a reduction and a name."""

from minidl.losses.base import LossFunctionWrapper, Reduction
from minidl.losses.margin import categorical_hinge, hinge, squared_hinge
from minidl.losses.inputs import check_label_smoothing
from minidl.losses.probabilistic import (
    binary_crossentropy, categorical_crossentropy, kl_divergence, poisson,
    sparse_categorical_crossentropy)
from minidl.losses.regression import (
    cosine_similarity, huber, log_cosh, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_error, mean_squared_logarithmic_error)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Loss class of :func:`categorical_crossentropy`."""

    def __init__(self, from_logits=False, label_smoothing=0.0, reduction=Reduction.AUTO,
                 name='categorical_crossentropy'):
        check_label_smoothing(type(self).__name__, label_smoothing)
        super().__init__(categorical_crossentropy, reduction, name, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Loss class of :func:`sparse_categorical_crossentropy`."""

    def __init__(self, from_logits=False, reduction=Reduction.AUTO,
                 name='sparse_categorical_crossentropy'):
        super().__init__(sparse_categorical_crossentropy, reduction, name, from_logits=from_logits)


class BinaryCrossentropy(LossFunctionWrapper):
    """Loss class of :func:`binary_crossentropy`."""

    def __init__(self, from_logits=False, label_smoothing=0.0, reduction=Reduction.AUTO,
                 name='binary_crossentropy'):
        check_label_smoothing(type(self).__name__, label_smoothing)
        super().__init__(binary_crossentropy, reduction, name, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CosineSimilarity(LossFunctionWrapper):
    """Loss class of :func:`cosine_similarity`."""

    def __init__(self, axis=-1, reduction=Reduction.AUTO, name='cosine_similarity'):
        super().__init__(cosine_similarity, reduction, name, axis=axis)


class Huber(LossFunctionWrapper):
    """Loss class of :func:`huber`."""

    def __init__(self, delta=1.0, reduction=Reduction.AUTO, name='huber_loss'):
        if not delta > 0:
            raise ValueError(f'Huber: delta must be positive, got {delta}')
        super().__init__(huber, reduction, name, delta=delta)


class _WithoutOptions(LossFunctionWrapper):
    """The Loss class of ``function``, which takes no options; named after it by default."""

    function = None

    def __init__(self, reduction=Reduction.AUTO, name=None):
        function = type(self).function
        super().__init__(function, reduction, name or function.__name__)


class MeanSquaredError(_WithoutOptions):
    """Loss class of :func:`mean_squared_error`."""
    function = staticmethod(mean_squared_error)


class MeanAbsoluteError(_WithoutOptions):
    """Loss class of :func:`mean_absolute_error`."""
    function = staticmethod(mean_absolute_error)


class MeanAbsolutePercentageError(_WithoutOptions):
    """Loss class of :func:`mean_absolute_percentage_error`."""
    function = staticmethod(mean_absolute_percentage_error)


class MeanSquaredLogarithmicError(_WithoutOptions):
    """Loss class of :func:`mean_squared_logarithmic_error`."""
    function = staticmethod(mean_squared_logarithmic_error)


class Hinge(_WithoutOptions):
    """Loss class of :func:`hinge`."""
    function = staticmethod(hinge)


class SquaredHinge(_WithoutOptions):
    """Loss class of :func:`squared_hinge`."""
    function = staticmethod(squared_hinge)


class CategoricalHinge(_WithoutOptions):
    """Loss class of :func:`categorical_hinge`."""
    function = staticmethod(categorical_hinge)


class KLDivergence(_WithoutOptions):
    """Loss class of :func:`kl_divergence`."""
    function = staticmethod(kl_divergence)


class Poisson(_WithoutOptions):
    """Loss class of :func:`poisson`."""
    function = staticmethod(poisson)


class LogCosh(_WithoutOptions):
    """Loss class of :func:`log_cosh`."""
    function = staticmethod(log_cosh)
