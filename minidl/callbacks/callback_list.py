"""CallbackList: the callbacks of one fit / evaluate / predict call, called in order."""

import numpy as np

from minidl.callbacks.base import Callback
from minidl.callbacks.history import History
from minidl.callbacks.progbar import ProgbarLogger


class CallbackList:
    """The callbacks of one ``fit`` / ``evaluate`` / ``predict`` call, called in order.

    As in Keras, a :class:`ProgbarLogger` is put first and a :class:`History`
    last unless the list has one already. Each hook gets one copy of the
    loop's logs, shared by all callbacks, so values a callback adds (the
    ``'lr'`` of ReduceLROnPlateau) reach those after it, History included.

    Args:
        callbacks: None, a Callback, or a list of Callbacks.
        add_history: Whether to append a History (for ``fit``).
        add_progbar: Whether to insert a ProgbarLogger (``verbose != 0``).
        model: The model, given to every callback.
        **params: The loop's parameters (``verbose``, ``epochs``, ``steps``).

    Raises:
        TypeError: If an element of ``callbacks`` is not a Callback instance.
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback):
            callbacks = [callbacks]
        callbacks = list(callbacks)
        for index, callback in enumerate(callbacks):
            if not isinstance(callback, Callback):
                raise TypeError(f'callbacks[{index}] must be a Callback instance, got '
                                f'{callback!r}')
        self.callbacks = callbacks
        self._history = next((c for c in callbacks if isinstance(c, History)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in callbacks):
            self.callbacks.insert(0, ProgbarLogger(count_mode='steps'))
        self.model = None
        self.params = {}
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    @property
    def history(self):
        """The History callback of the list (None if it has none)."""
        return self._history

    def append(self, callback):
        self.callbacks.append(callback)

    def __iter__(self):
        return iter(self.callbacks)

    def set_params(self, params):
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model):
        self.model = model
        for callback in self.callbacks:
            callback.set_model(model)

    def set_validation_data(self, x, y, sample_weight):
        """Give each callback Keras 2's ``validation_data``: the lists of validation inputs
        ``x`` and targets ``y``, then one sample weight array per target (ones where
        ``sample_weight``, one array for all or a list with one per target, gives none)."""
        count = len(x[0])
        targets = list(y or [])
        weights = sample_weight if isinstance(sample_weight, list) else \
            [sample_weight] * len(targets)
        weights = [np.ones(count, np.float32) if w is None else w for w in weights]
        for callback in self.callbacks:
            callback.validation_data = list(x) + targets + weights

    def _call(self, hook, logs, *args):
        logs = {} if logs is None else dict(logs)
        for callback in self.callbacks:
            getattr(callback, hook)(*args, logs)

    def on_train_begin(self, logs=None):
        self._call('on_train_begin', logs)

    def on_train_end(self, logs=None):
        self._call('on_train_end', logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call('on_epoch_begin', logs, epoch)

    def on_epoch_end(self, epoch, logs=None):
        self._call('on_epoch_end', logs, epoch)

    def on_train_batch_begin(self, batch, logs=None):
        self._call('on_train_batch_begin', logs, batch)

    def on_train_batch_end(self, batch, logs=None):
        self._call('on_train_batch_end', logs, batch)

    on_batch_begin = on_train_batch_begin
    on_batch_end = on_train_batch_end

    def on_test_begin(self, logs=None):
        self._call('on_test_begin', logs)

    def on_test_end(self, logs=None):
        self._call('on_test_end', logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call('on_test_batch_begin', logs, batch)

    def on_test_batch_end(self, batch, logs=None):
        self._call('on_test_batch_end', logs, batch)

    def on_predict_begin(self, logs=None):
        self._call('on_predict_begin', logs)

    def on_predict_end(self, logs=None):
        self._call('on_predict_end', logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call('on_predict_batch_begin', logs, batch)

    def on_predict_batch_end(self, batch, logs=None):
        self._call('on_predict_batch_end', logs, batch)
