"""Names of losses, and ``get`` / ``serialize`` / ``deserialize`` over them.

Function names and aliases ('categorical_crossentropy', 'mse') stand for the
functions, class names ('MeanSquaredError') for instances, as in Keras.
"""

from minidl.losses import classes, margin, probabilistic, regression
from minidl.losses.base import Loss, LossFunctionWrapper

_FUNCTIONS = {
    name: getattr(module, name)
    for module, names in [
        (probabilistic, ['categorical_crossentropy', 'sparse_categorical_crossentropy',
                         'binary_crossentropy', 'kl_divergence', 'kld', 'KLD',
                         'kullback_leibler_divergence', 'poisson']),
        (regression, ['mean_squared_error', 'mse', 'MSE', 'mean_absolute_error', 'mae', 'MAE',
                      'mean_absolute_percentage_error', 'mape', 'MAPE',
                      'mean_squared_logarithmic_error', 'msle', 'MSLE', 'huber', 'log_cosh',
                      'logcosh', 'cosine_similarity']),
        (margin, ['hinge', 'squared_hinge', 'categorical_hinge']),
    ]
    for name in names
}
_CLASSES = {cls.__name__: cls for cls in [
    LossFunctionWrapper, classes.CategoricalCrossentropy, classes.SparseCategoricalCrossentropy,
    classes.BinaryCrossentropy, classes.MeanSquaredError, classes.MeanAbsoluteError,
    classes.MeanAbsolutePercentageError, classes.MeanSquaredLogarithmicError, classes.Hinge,
    classes.SquaredHinge, classes.CategoricalHinge, classes.KLDivergence, classes.Poisson,
    classes.CosineSimilarity, classes.Huber, classes.LogCosh]}


def get(identifier):
    """A loss from a name, a ``{'class_name', 'config'}`` dict, a Loss or a callable.

    Function names and aliases ('mse') give the function; class names
    ('MeanSquaredError') and dicts give a new instance; None gives None.

    Raises:
        ValueError: For an unknown name.
        TypeError: For anything else that is not callable.
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier) and not isinstance(identifier, type):
        return identifier
    raise TypeError(f'cannot interpret {identifier!r} as a loss')


def serialize(loss):
    """A Loss as its ``{'class_name', 'config'}`` dict; a function as its name."""
    if isinstance(loss, Loss):
        return {'class_name': type(loss).__name__, 'config': loss.get_config()}
    if callable(loss) and hasattr(loss, '__name__'):
        return loss.__name__
    raise TypeError(f'cannot serialize {loss!r} as a loss')


def deserialize(config, custom_objects=None):
    """The loss that a name or a ``{'class_name', 'config'}`` dict stands for.

    Args:
        config: A function or class name, or a dict from :func:`serialize`.
        custom_objects: Optional dict of user loss functions and classes by name.
    """
    known = {**_FUNCTIONS, **_CLASSES, **(custom_objects or {})}
    if isinstance(config, str):
        found = known.get(config)
        if found is None:
            raise ValueError(f'unknown loss {config!r}; known: {", ".join(sorted(known))}')
        return found() if isinstance(found, type) else found
    if isinstance(config, dict) and 'class_name' in config:
        cls = known.get(config['class_name'])
        if not (isinstance(cls, type) and issubclass(cls, Loss)):
            raise ValueError(f'unknown loss class {config["class_name"]!r}')
        arguments = dict(config.get('config', {}))
        if cls is LossFunctionWrapper and isinstance(arguments.get('fn'), str):
            arguments['fn'] = deserialize(arguments['fn'], custom_objects)
        return cls.from_config(arguments)
    raise TypeError(f'cannot interpret {config!r} as a loss config')
