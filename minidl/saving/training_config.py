"""A model's compile arguments as JSON ('training_config'), and compiling from them.

Losses and metrics are written as Keras 2 writes them: names stay names,
functions become their names, Loss and Metric objects become
``{'class_name', 'config'}`` dicts, inside the same lists and dicts by
output the user gave. Reading resolves every name through the registries of
:mod:`minidl.losses`, :mod:`minidl.metrics` and :mod:`minidl.optimizers`
(or ``custom_objects``), so a saved string is only ever looked up, never run.
"""

from minidl import losses, metrics, optimizers


def training_config(model):
    """The 'training_config' dict of a compiled ``model``."""
    arguments = model._compile_args
    return {
        'loss': _serialize_nested(arguments['loss'], _serialize_loss),
        'metrics': _serialize_nested(arguments['metrics'], _serialize_metric),
        'weighted_metrics': None,
        'loss_weights': arguments['loss_weights'],
        'sample_weight_mode': arguments.get('sample_weight_mode'),
        'optimizer_config': optimizers.serialize(model.optimizer),
    }


def _serialize_nested(value, serialize_one):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [_serialize_nested(item, serialize_one) for item in value]
    if isinstance(value, dict):
        return {key: _serialize_nested(item, serialize_one) for key, item in value.items()}
    return serialize_one(value)


def _serialize_loss(loss):
    if isinstance(loss, type):
        return loss.__name__
    return losses.serialize(loss)


def _serialize_metric(metric):
    if isinstance(metric, type):
        return metric.__name__
    if isinstance(metric, (metrics.Metric, losses.Loss)):
        # A Loss as a metric is saved as the Metric compile made of it: loadable as one.
        return metrics.serialize(metrics.get(metric))
    if callable(metric) and hasattr(metric, '__name__'):
        return metric.__name__
    raise TypeError(f'cannot save the metric {metric!r}: it is not a name, function or Metric')


def compile_arguments(config, custom_objects=None):
    """The keyword arguments of ``Model.compile`` that a 'training_config' describes.

    Raises:
        ValueError: For a malformed config or an unknown loss, metric or
            optimizer (custom ones must be passed in ``custom_objects``).
    """
    if not isinstance(config, dict):
        raise ValueError(f"'training_config' must be a JSON object, found "
                         f"{type(config).__name__}")
    custom_objects = custom_objects or {}
    optimizer_config = config.get('optimizer_config')
    if not (isinstance(optimizer_config, dict) and isinstance(optimizer_config.get('class_name'),
                                                              str)
            and isinstance(optimizer_config.get('config', {}), dict)):
        raise ValueError(f"'training_config' needs an 'optimizer_config' with a 'class_name' "
                         f"string and a 'config' object, found {optimizer_config!r:.200}")
    loss_weights = config.get('loss_weights')
    if not _is_weights(loss_weights):
        raise ValueError(f"'loss_weights' must be null, numbers, or numbers by output name; "
                         f"found {loss_weights!r:.200}")
    sample_weight_mode = config.get('sample_weight_mode')
    if not _is_sample_weight_mode(sample_weight_mode):
        raise ValueError(f"'sample_weight_mode' must be null, \"temporal\", or those by output; "
                         f"found {sample_weight_mode!r:.200}")
    arguments = {
        'optimizer': _resolve_optimizer(optimizer_config, custom_objects),
        'loss': _resolve_nested(config.get('loss'), 'loss', losses.deserialize, custom_objects),
        'metrics': _resolve_nested(config.get('metrics'), 'metric', metrics.deserialize,
                                   custom_objects),
        'loss_weights': loss_weights,
        'sample_weight_mode': sample_weight_mode,
    }
    if config.get('weighted_metrics') is not None:
        arguments['weighted_metrics'] = _resolve_nested(
            config['weighted_metrics'], 'metric', metrics.deserialize, custom_objects)
    return arguments


def _is_weights(value):
    if value is None or _is_number(value):
        return True
    if isinstance(value, list):
        return all(_is_number(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_number(item) for key, item in value.items())
    return False


def _is_sample_weight_mode(value):
    modes = value.values() if isinstance(value, dict) else \
        value if isinstance(value, list) else [value]
    return all(mode in (None, 'temporal') for mode in modes)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _resolve_optimizer(config, custom_objects):
    try:
        return optimizers.deserialize(config, custom_objects=custom_objects)
    except (TypeError, ValueError) as error:
        raise ValueError(f'cannot make the saved optimizer {config["class_name"]!r}: {error}; '
                         f'a custom optimizer class must be given in custom_objects') from error


def _resolve_nested(value, kind, deserialize, custom_objects):
    """Names checked against the registry, configs deserialised, structure kept.

    Names stay names (or become the object ``custom_objects`` gives for them)
    so that ``compile`` resolves them as it would a user's: 'accuracy' still
    depends on the loss, and each output gets its own metric objects.
    """
    if value is None:
        return None
    if isinstance(value, str):
        try:
            deserialize(value, custom_objects)
        except (TypeError, ValueError) as error:
            raise ValueError(f'unknown {kind} {value!r} in the training config; pass a custom '
                             f'{kind} in custom_objects={{{value!r}: ...}}, or load with '
                             f'compile=False') from error
        return custom_objects.get(value, value)
    if isinstance(value, dict) and 'class_name' in value:
        if not isinstance(value['class_name'], str) or not isinstance(value.get('config', {}),
                                                                      dict):
            raise ValueError(f'malformed {kind} config {value!r:.200}')
        try:
            return deserialize(value, custom_objects)
        except (TypeError, ValueError) as error:
            raise ValueError(f'cannot make the {kind} {value["class_name"]!r} of the training '
                             f'config: {error}; custom classes must be given in '
                             f'custom_objects') from error
    if isinstance(value, list):
        return [_resolve_nested(item, kind, deserialize, custom_objects) for item in value]
    if isinstance(value, dict):
        return {key: _resolve_nested(item, kind, deserialize, custom_objects)
                for key, item in value.items()}
    raise ValueError(f'malformed {kind} in the training config: {value!r:.200} (expected a '
                     f'name, a {{"class_name", "config"}} object, or a list or object of them)')
