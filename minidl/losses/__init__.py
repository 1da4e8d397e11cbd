"""Keras 2's losses: per-sample functions, Loss classes with reductions, and a registry.

A loss function takes ``(y_true, y_pred)`` and returns one loss per sample,
of shape ``y_pred.shape[:-1]``: Keras reduces the last axis (the classes, or
a regression target's features). A :class:`Loss` instance weights and reduces
them; ``per_sample`` gives them unreduced::

    loss = minidl.losses.SparseCategoricalCrossentropy()
    value = loss(labels, probabilities, sample_weight=w)

Modules: ``inputs`` (conversion and checks of ``y_true`` / ``y_pred``),
``probabilistic`` (cross-entropies, KL divergence, Poisson), ``regression``,
``margin`` (hinge losses), ``base`` (Loss, reductions), ``classes`` (Keras's
Loss classes) and ``registry`` (``get`` / ``serialize`` / ``deserialize``).
"""

from minidl.losses.base import Loss, LossFunctionWrapper, Reduction, compute_weighted_loss
from minidl.losses.ctc import CTC, ctc
from minidl.losses.classes import (
    BinaryCrossentropy, CategoricalCrossentropy, CategoricalHinge, CosineSimilarity, Hinge, Huber,
    KLDivergence, LogCosh, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
    MeanSquaredLogarithmicError, Poisson, SparseCategoricalCrossentropy, SquaredHinge)
from minidl.losses.margin import categorical_hinge, hinge, squared_hinge
from minidl.losses.probabilistic import (
    KLD, binary_crossentropy, categorical_crossentropy, kl_divergence, kld,
    kullback_leibler_divergence, poisson, sparse_categorical_crossentropy)
from minidl.losses.regression import (
    MAE, MAPE, MSE, MSLE, cosine, cosine_proximity, cosine_similarity, huber, log_cosh, logcosh,
    mae, mape, mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
    mean_squared_logarithmic_error, mse, msle)
from minidl.losses.registry import deserialize, get, serialize
