"""What the monitoring callbacks share: the mode argument and reading the monitored value."""

import warnings

from minidl.callbacks.base import is_chief

MODES = ('auto', 'min', 'max')


def check_mode(callback, mode):
    """Raise a ValueError unless ``mode`` is 'auto', 'min' or 'max'."""
    if mode not in MODES:
        raise ValueError(f"{callback}: mode must be 'auto', 'min' or 'max', got {mode!r}")


def check_non_negative(callback, argument, value):
    """Raise a ValueError unless ``value`` is a number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f'{callback}: {argument} must be a number >= 0, got {value!r}')


def monitored_value(model, monitor, logs, message):
    """``logs[monitor]``, or None after a warning (on the chief) listing the logged names.

    Keras 2.2.4 logged ``metrics=['accuracy']`` as 'acc' and Keras 2.3 as
    'accuracy' (as minidl does), so scripts of either monitor the other
    spelling: 'val_acc' finds 'val_accuracy' and the other way round.

    Args:
        model: The model (its strategy says whether this process may warn).
        monitor: The name of the value.
        logs: The logs of the hook, or None.
        message: The warning, with ``{monitor}`` where the name goes.
    """
    logs = logs or {}
    value = logs.get(monitor)
    if value is None and monitor.endswith(('acc', 'accuracy')):
        stem = monitor[:-len('accuracy')] if monitor.endswith('accuracy') else monitor[:-3]
        other = stem + ('acc' if monitor.endswith('accuracy') else 'accuracy')
        value = logs.get(other)
    if value is None and is_chief(model):
        warnings.warn(f'{message.format(monitor=monitor)} Available metrics are: '
                      f'{",".join(logs)}', RuntimeWarning, stacklevel=3)
    return value
