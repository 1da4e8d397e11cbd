"""ModelCheckpoint: save the model (or its weights) every epoch, every N batches, or when best."""

import math
import os
import string

import numpy as np

from minidl.callbacks.base import Callback, print_on_chief
from minidl.callbacks.monitor import check_mode, monitored_value


class ModelCheckpoint(Callback):
    """Saves the model with ``model.save`` (or ``model.save_weights``) during ``fit``.

    ``filepath`` may name values to fill in: ``filepath.format(epoch=epoch + 1,
    **logs)`` (plus ``batch=batch + 1`` when saving every N batches), so
    ``'weights.{epoch:02d}-{val_loss:.2f}.h5'`` gives one file per epoch.
    Only the chief process writes; every process keeps the same ``best``.

    Args:
        filepath: Path (str or path-like) or path pattern of the saved file.
        monitor: Name of the logged value that ``save_best_only`` compares.
        verbose: 1 prints a line for each save (or skipped save).
        save_best_only: Save only when ``monitor`` improves on the best so far.
        save_weights_only: Call ``model.save_weights`` instead of ``model.save``.
        mode: 'min', 'max', or 'auto': 'max' for names containing 'acc' or
            starting with 'fmeasure', else 'min'.
        period: Save every that many epochs (Keras 2's argument).
        save_freq: 'epoch', or an int: save after every that many batches.
        initial_value_threshold: The best value to beat at first (default: none).

    Raises:
        ValueError: For a bad ``mode``, ``save_freq`` or ``period``.
    """

    def __init__(self, filepath, monitor='val_loss', verbose=0, save_best_only=False,
                 save_weights_only=False, mode='auto', period=1, save_freq='epoch',
                 initial_value_threshold=None):
        super().__init__()
        check_mode('ModelCheckpoint', mode)
        if save_freq != 'epoch' and not _is_positive_int(save_freq):
            raise ValueError(f"ModelCheckpoint: save_freq must be 'epoch' or a positive "
                             f"integer (a number of batches), got {save_freq!r}")
        if not _is_positive_int(period):
            raise ValueError(f'ModelCheckpoint: period must be a positive integer, '
                             f'got {period!r}')
        self.period = period
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        if mode == 'auto':
            mode = 'max' if 'acc' in monitor or monitor.startswith('fmeasure') else 'min'
        self.monitor_op = np.greater if mode == 'max' else np.less
        if initial_value_threshold is None:
            initial_value_threshold = -math.inf if mode == 'max' else math.inf
        self.best = initial_value_threshold
        self.epochs_since_last_save = 0
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_since_last_save += 1
        if self.save_freq == 'epoch' and self.epochs_since_last_save >= self.period:
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch):
        if self.save_freq == 'epoch':
            return False
        # Batch indices restart at 0 each epoch; count the batches across epochs.
        if batch <= self._last_batch_seen:
            self._batches_seen_since_last_saving += batch + 1
        else:
            self._batches_seen_since_last_saving += batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _save_model(self, epoch, batch, logs):
        logs = logs or {}
        self.epochs_since_last_save = 0
        filepath = self._file_path(epoch, batch, logs)
        if self.save_best_only:
            current = monitored_value(self.model, self.monitor, logs,
                                      'Can save best model only with {monitor} available, '
                                      'skipping.')
            if current is None:
                return
            if not self.monitor_op(current, self.best):
                self._say('\nEpoch %05d: %s did not improve from %0.5f'
                          % (epoch + 1, self.monitor, self.best))
                return
            self._say('\nEpoch %05d: %s improved from %0.5f to %0.5f, saving model to %s'
                      % (epoch + 1, self.monitor, self.best, current, filepath))
            self.best = current
        else:
            self._say('\nEpoch %05d: saving model to %s' % (epoch + 1, filepath))
        # Every process saves: a distributed strategy may gather sharded weights
        # first (a collective); model.save writes only where the strategy says.
        self._write(filepath)

    def on_train_begin(self, logs=None):
        self._check_validation_fields()

    def _check_validation_fields(self):
        """ValueError before the first step when ``filepath`` names a validation value
        (``{val_loss}``) and ``fit`` was given no validation data to compute it.

        Other names are not checked: a callback may add values to the logs.
        """
        if self.params.get('do_validation', True):
            return
        fields = {field.split('.')[0].split('[')[0]
                  for _, field, _, _ in string.Formatter().parse(self.filepath) if field}
        missing = sorted(name for name in fields if name.startswith('val_'))
        if missing:
            raise ValueError(f'ModelCheckpoint: filepath {self.filepath!r} names {missing}, '
                             f'but fit has no validation data to compute them; pass '
                             f'validation_data or validation_split, or leave them out of '
                             f'the file name')

    def _file_path(self, epoch, batch, logs):
        fields = dict(logs)
        if batch is not None:
            fields.setdefault('batch', batch + 1)
        try:
            return self.filepath.format(**dict(fields, epoch=epoch + 1))
        except KeyError as error:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f'Reason: {error}') from error

    def _write(self, filepath):
        if os.path.isdir(filepath):
            raise IsADirectoryError(f'Please specify a non-directory filepath for '
                                    f'ModelCheckpoint. Filepath used is an existing '
                                    f'directory: {filepath}')
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)

    def _say(self, message):
        if self.verbose > 0:
            print_on_chief(self.model, message)


def _is_positive_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
