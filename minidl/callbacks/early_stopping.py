"""Callbacks that end training: EarlyStopping (no more progress) and TerminateOnNaN."""

import math

import numpy as np

from minidl.callbacks.base import Callback, print_on_chief
from minidl.callbacks.monitor import check_mode, check_non_negative, monitored_value


class EarlyStopping(Callback):
    """Stops training when a monitored value has stopped improving.

    After each epoch (from ``start_from_epoch`` on) the value is compared with
    the best so far; an improvement by more than ``min_delta`` that also
    beats ``baseline`` (if given) resets the count of waiting epochs. Once
    ``patience`` epochs passed without one (and not at the first epoch),
    ``model.stop_training`` is set. Every process decides alike from the
    same global logs; only the chief prints.

    Args:
        monitor: Name of the logged value ('val_loss', 'val_accuracy', ...).
        min_delta: Smallest change that counts as an improvement.
        patience: Epochs without improvement before stopping.
        verbose: 1 prints when training stops (and weights are restored).
        mode: 'min', 'max', or 'auto': 'max' for names ending in 'acc',
            'accuracy' or 'auc', else 'min'.
        baseline: A value training must beat within ``patience`` epochs.
        restore_best_weights: On stopping, set the weights back to those of
            the best epoch (the first monitored epoch's if none improved).
            As in tf.keras 2.x, a run that ends without stopping keeps its
            last weights.
        start_from_epoch: Epochs of warm-up that are not monitored.

    Raises:
        ValueError: For a bad ``mode``, ``patience`` or ``start_from_epoch``.

    Unlike tf.keras 2.x, an epoch that improves never stops training: there,
    ``patience=0`` stops at the second epoch even while the value improves
    (a bug the documentation of ``patience`` contradicts).
    """

    def __init__(self, monitor='val_loss', min_delta=0, patience=0, verbose=0, mode='auto',
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        check_mode('EarlyStopping', mode)
        check_non_negative('EarlyStopping', 'patience', patience)
        check_non_negative('EarlyStopping', 'start_from_epoch', start_from_epoch)
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        if mode == 'auto':
            mode = 'max' if monitor.endswith(('acc', 'accuracy', 'auc')) else 'min'
        self.monitor_op = np.greater if mode == 'max' else np.less
        # Signed so that ``current - min_delta`` must still beat the reference.
        self.min_delta = abs(min_delta) if mode == 'max' else -abs(min_delta)
        self._reset()

    def _reset(self):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = -math.inf if self.monitor_op is np.greater else math.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
                return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print_on_chief(self.model, 'Restoring model weights from the end of the '
                                               f'best epoch: {self.best_epoch + 1}.')
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_on_chief(self.model, 'Epoch %05d: early stopping' % (self.stopped_epoch + 1))

    def get_monitor_value(self, logs):
        """The monitored value of ``logs``, or None (with a warning) if it is missing."""
        return monitored_value(self.model, self.monitor, logs,
                               'Early stopping conditioned on metric `{monitor}` which is '
                               'not available.')

    def _is_improvement(self, monitor_value, reference_value):
        return self.monitor_op(monitor_value - self.min_delta, reference_value)


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get('loss')
        if loss is not None and not np.isfinite(loss):
            print_on_chief(self.model, 'Batch %d: Invalid loss, terminating training' % batch)
            self.model.stop_training = True
