"""Callbacks with Keras 2's names, arguments and behaviour.

``model.fit(x, y, callbacks=[EarlyStopping(patience=3), ModelCheckpoint('best.h5',
save_best_only=True)])``. Write your own by subclassing :class:`Callback`
(its module, :mod:`minidl.callbacks.base`, says when each hook runs). Under
a distributed strategy only the chief process prints and writes files, while
whatever changes training (stopping, the learning rate, restored weights)
happens alike on every process.
"""

from minidl.callbacks.base import Callback
from minidl.callbacks.callback_list import CallbackList
from minidl.callbacks.checkpoint import ModelCheckpoint
from minidl.callbacks.csv_logger import CSVLogger
from minidl.callbacks.early_stopping import EarlyStopping, TerminateOnNaN
from minidl.callbacks.history import History
from minidl.callbacks.lambda_callback import LambdaCallback
from minidl.callbacks.learning_rate import LearningRateScheduler, ReduceLROnPlateau
from minidl.callbacks.progbar import ProgbarLogger
from minidl.callbacks.tensorboard import TensorBoard

__all__ = [
    'CSVLogger', 'Callback', 'CallbackList', 'EarlyStopping', 'History', 'LambdaCallback',
    'LearningRateScheduler', 'ModelCheckpoint', 'ProgbarLogger', 'ReduceLROnPlateau',
    'TensorBoard', 'TerminateOnNaN',
]
