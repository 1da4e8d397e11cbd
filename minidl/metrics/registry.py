"""Metric names, and ``get`` / ``serialize`` / ``deserialize`` over them.

``get`` always returns a :class:`Metric` instance, named as the user wrote
it, so that ``History.history`` has the keys a Keras user expects: 'acc'
stays 'acc', 'mse' stays 'mse', a function gives its ``__name__``.
'accuracy' / 'acc' and 'crossentropy' / 'ce' depend on the model's loss and
output, as in Keras 2: binary when the loss is binary cross-entropy or the
output has one unit, sparse for a sparse categorical cross-entropy loss,
categorical otherwise.
"""

from minidl import losses
from minidl.metrics import accuracy_metrics
from minidl.metrics import loss_metrics
from minidl.metrics.base import Mean, MeanMetricWrapper, Metric, Sum
from minidl.registry import Registry

REGISTRY = Registry('metric', base=Metric)
for _name in ['accuracy', 'binary_accuracy', 'categorical_accuracy', 'sparse_categorical_accuracy',
              'top_k_categorical_accuracy', 'sparse_top_k_categorical_accuracy']:
    REGISTRY.register(getattr(accuracy_metrics, _name), _name)
for _name in ['binary_crossentropy', 'categorical_crossentropy', 'sparse_categorical_crossentropy',
              'mean_squared_error', 'mse', 'MSE', 'mean_absolute_error', 'mae', 'MAE',
              'mean_absolute_percentage_error', 'mape', 'MAPE', 'mean_squared_logarithmic_error',
              'msle', 'MSLE', 'hinge', 'squared_hinge', 'categorical_hinge', 'kl_divergence', 'kld',
              'KLD', 'kullback_leibler_divergence', 'poisson', 'log_cosh', 'logcosh',
              'cosine_proximity', 'cosine']:
    REGISTRY.register(getattr(losses, _name), _name)
REGISTRY.register(loss_metrics.cosine_similarity)
for _cls in [
        Mean, Sum, MeanMetricWrapper, accuracy_metrics.Accuracy, accuracy_metrics.BinaryAccuracy,
        accuracy_metrics.CategoricalAccuracy, accuracy_metrics.SparseCategoricalAccuracy,
        accuracy_metrics.TopKCategoricalAccuracy, accuracy_metrics.SparseTopKCategoricalAccuracy,
        loss_metrics.MeanSquaredError, loss_metrics.MeanAbsoluteError,
        loss_metrics.MeanAbsolutePercentageError, loss_metrics.MeanSquaredLogarithmicError,
        loss_metrics.RootMeanSquaredError, loss_metrics.Hinge, loss_metrics.SquaredHinge,
        loss_metrics.CategoricalHinge, loss_metrics.KLDivergence, loss_metrics.Poisson,
        loss_metrics.LogCoshError, loss_metrics.CosineSimilarity,
        loss_metrics.CategoricalCrossentropy, loss_metrics.SparseCategoricalCrossentropy,
        loss_metrics.BinaryCrossentropy]:
    REGISTRY.register(_cls)

# For each loss-dependent name: the (binary, sparse, categorical) metric classes.
_DEPENDS_ON_LOSS = {
    'accuracy': (accuracy_metrics.BinaryAccuracy, accuracy_metrics.SparseCategoricalAccuracy,
                 accuracy_metrics.CategoricalAccuracy),
    'crossentropy': (loss_metrics.BinaryCrossentropy, loss_metrics.SparseCategoricalCrossentropy,
                     loss_metrics.CategoricalCrossentropy),
}
_DEPENDS_ON_LOSS.update(acc=_DEPENDS_ON_LOSS['accuracy'], ce=_DEPENDS_ON_LOSS['crossentropy'])


def get(identifier, loss=None, output_shape=None):
    """A Metric instance for a name, config dict, Metric, Metric class, Loss or function.

    Args:
        identifier: A metric or metric-function name ('accuracy', 'mse',
            'CategoricalAccuracy'), a ``{'class_name', 'config'}`` dict, a
            Metric (returned as is), a Metric class, a Loss instance, or a
            function ``fn(y_true, y_pred)`` of per-sample values.
        loss: The loss of the output the metric is for (a name, function,
            Loss or dict), which 'accuracy' and 'crossentropy' depend on.
        output_shape: The output's shape; a last axis of size one makes
            'accuracy' binary.

    Raises:
        ValueError: For an unknown name.
        TypeError: For an identifier of another kind.
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str) and identifier in _DEPENDS_ON_LOSS:
        return _class_for_loss(identifier, loss, output_shape)(name=identifier)
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, losses.LossFunctionWrapper):
        return MeanMetricWrapper(identifier.fn, identifier.name, **identifier.fn_kwargs)
    if isinstance(identifier, losses.Loss):
        return MeanMetricWrapper(identifier.per_sample, identifier.name)
    if callable(identifier):
        return MeanMetricWrapper(identifier, getattr(identifier, '__name__', None) or 'metric')
    raise TypeError(f'cannot interpret {identifier!r} as a metric')


def _class_for_loss(name, loss, output_shape):
    binary, sparse, categorical = _DEPENDS_ON_LOSS[name]
    if isinstance(loss, (str, dict)):
        loss = losses.get(loss)
    if isinstance(loss, losses.LossFunctionWrapper):
        loss = loss.fn
    if loss is losses.binary_crossentropy or (output_shape and output_shape[-1] == 1):
        return binary
    if loss is losses.sparse_categorical_crossentropy:
        return sparse
    return categorical


def serialize(metric):
    """A Metric as a ``{'class_name', 'config'}`` dict (a wrapped function by its name)."""
    if not isinstance(metric, Metric):
        raise TypeError(f'cannot serialize {metric!r} as a metric')
    config = REGISTRY.serialize(metric)
    if callable(config['config'].get('fn')):
        config['config']['fn'] = config['config']['fn'].__name__
    return config


def deserialize(config, custom_objects=None):
    """The Metric a name or a ``{'class_name', 'config'}`` dict stands for.

    A function name gives a :class:`MeanMetricWrapper` of that name; a class
    name, an instance with its default name.

    Args:
        config: A name, or a dict from :func:`serialize`.
        custom_objects: Optional dict of user metric functions and classes by name.
    """
    if isinstance(config, str) and config in _DEPENDS_ON_LOSS:
        return get(config)
    if isinstance(config, dict) and isinstance(config.get('config'), dict) \
            and isinstance(config['config'].get('fn'), str):
        # A MeanMetricWrapper's function is saved by name: look it up, never run text.
        arguments = dict(config['config'])
        arguments['fn'] = REGISTRY.lookup_function(arguments['fn'], custom_objects)
        config = {**config, 'config': arguments}
    found = REGISTRY.deserialize(config, custom_objects)
    if isinstance(found, Metric):
        return found
    return MeanMetricWrapper(found, config if isinstance(config, str) else config['class_name'])
