"""Names of losses, and ``get`` / ``serialize`` / ``deserialize`` over them.

Function names and aliases ('categorical_crossentropy', 'mse') stand for the
functions, class names ('MeanSquaredError') for instances, as in Keras.
"""

from minidl.losses import classes, margin, probabilistic, regression
from minidl.losses.base import Loss, LossFunctionWrapper
from minidl.losses.ctc import CTC, ctc
from minidl.registry import Registry

REGISTRY = Registry('loss', base=Loss)
for _module, _names in [
        (probabilistic, ['categorical_crossentropy', 'sparse_categorical_crossentropy',
                         'binary_crossentropy', 'kl_divergence', 'kld', 'KLD',
                         'kullback_leibler_divergence', 'poisson']),
        (regression, ['mean_squared_error', 'mse', 'MSE', 'mean_absolute_error', 'mae', 'MAE',
                      'mean_absolute_percentage_error', 'mape', 'MAPE',
                      'mean_squared_logarithmic_error', 'msle', 'MSLE', 'huber', 'log_cosh',
                      'logcosh', 'cosine_similarity', 'cosine_proximity', 'cosine']),
        (margin, ['hinge', 'squared_hinge', 'categorical_hinge'])]:
    for _name in _names:
        REGISTRY.register(getattr(_module, _name), _name)
REGISTRY.register(ctc)
for _cls in [
        LossFunctionWrapper, classes.CategoricalCrossentropy,
        classes.SparseCategoricalCrossentropy, classes.BinaryCrossentropy,
        classes.MeanSquaredError, classes.MeanAbsoluteError, classes.MeanAbsolutePercentageError,
        classes.MeanSquaredLogarithmicError, classes.Hinge, classes.SquaredHinge,
        classes.CategoricalHinge, classes.KLDivergence, classes.Poisson,
        classes.CosineSimilarity, classes.Huber, classes.LogCosh, CTC]:
    REGISTRY.register(_cls)


def get(identifier):
    """A loss from a name, a ``{'class_name', 'config'}`` dict, a Loss or a callable.

    Function names and aliases ('mse') give the function; class names
    ('MeanSquaredError') and dicts give a new instance; None gives None.

    Raises:
        ValueError: For an unknown name.
        TypeError: For anything else that is not callable.
    """
    if isinstance(identifier, dict):
        return deserialize(identifier)
    return REGISTRY.get(identifier)


def serialize(loss):
    """A Loss as its ``{'class_name', 'config'}`` dict; a function as its name."""
    return REGISTRY.serialize(loss)


def deserialize(config, custom_objects=None):
    """The loss that a name or a ``{'class_name', 'config'}`` dict stands for.

    Args:
        config: A function or class name, or a dict from :func:`serialize`.
        custom_objects: Optional dict of user loss functions and classes by name.
    """
    if isinstance(config, dict) and isinstance(config.get('config'), dict) \
            and isinstance(config['config'].get('fn'), str):
        # A LossFunctionWrapper's function is saved by name: look it up, never run text.
        arguments = dict(config['config'])
        arguments['fn'] = REGISTRY.lookup_function(arguments['fn'], custom_objects)
        config = {**config, 'config': arguments}
    return REGISTRY.deserialize(config, custom_objects)
