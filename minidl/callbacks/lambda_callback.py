"""LambdaCallback: a callback made of plain functions."""

from minidl.callbacks.base import HOOKS, Callback


class LambdaCallback(Callback):
    """A callback whose hooks are the functions given (the others do nothing).

    Each function takes the hook's arguments: ``on_epoch_begin(epoch, logs)``,
    ``on_batch_end(batch, logs)``, ``on_train_begin(logs)``, ...::

        LambdaCallback(on_epoch_end=lambda epoch, logs: print(epoch, logs['loss']))

    Args:
        on_epoch_begin, on_epoch_end, on_batch_begin, on_batch_end,
        on_train_begin, on_train_end: Functions for these hooks (the batch
            ones run for training batches).
        **kwargs: Functions for any other hook (``on_test_end=...``, ...).

    Raises:
        TypeError: For a keyword that names no hook, or a value that is not callable.
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        unknown = sorted(set(kwargs) - set(HOOKS))
        if unknown:
            raise TypeError(f'LambdaCallback: {", ".join(unknown)} is not a callback hook; '
                            f'hooks are {", ".join(HOOKS)}')
        functions = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                         on_batch_begin=on_batch_begin, on_batch_end=on_batch_end,
                         on_train_begin=on_train_begin, on_train_end=on_train_end, **kwargs)
        functions = {name: f for name, f in functions.items() if f is not None}
        for name, function in functions.items():
            if not callable(function):
                raise TypeError(f'LambdaCallback: {name} must be callable, got {function!r}')
        for name, function in functions.items():
            setattr(self, name, function)
