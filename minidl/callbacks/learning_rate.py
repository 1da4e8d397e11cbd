"""Callbacks that set the optimizer's learning rate between epochs.

Both change training, so they act identically on every process (the logs
they read are global); only their messages are printed by the chief alone.
Both log the rate as ``'lr'`` at the end of each epoch, as Keras does.
"""

import inspect
import math
import numbers
import warnings

import numpy as np

from minidl.callbacks.base import Callback, print_on_chief
from minidl.callbacks.monitor import check_mode, check_non_negative, monitored_value
from minidl.tensor import Tensor


def float_learning_rate(callback, model):
    """The optimizer's learning rate as a float; a TypeError if it is a schedule."""
    rate = model.optimizer.learning_rate
    if isinstance(rate, Tensor) and rate.size == 1:  # a Keras 2 optimizer's K.variable
        return float(rate.item())
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
        raise TypeError(f'{callback} sets the learning rate, which needs an optimizer with a '
                        f'float learning_rate, got {rate!r}; drop the schedule or the callback')
    return float(rate)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when a monitored value stops improving.

    Args:
        monitor: Name of the logged value.
        factor: Multiplier of the rate, in [0, 1).
        patience: Epochs without improvement before the rate is reduced.
        verbose: 1 prints each reduction.
        mode: 'min', 'max', or 'auto' ('max' for names containing 'acc').
        min_delta: Smallest change that counts as an improvement.
        cooldown: Epochs after a reduction during which no waiting is counted.
        min_lr: Lower bound of the rate.
        **kwargs: ``epsilon``: Keras's older name of ``min_delta``.

    Raises:
        ValueError: For ``factor >= 1.0`` or another bad argument.
    """

    def __init__(self, monitor='val_loss', factor=0.1, patience=10, verbose=0, mode='auto',
                 min_delta=1e-4, cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        check_non_negative('ReduceLROnPlateau', 'factor', factor)
        if factor >= 1.0:
            raise ValueError(f'ReduceLROnPlateau does not support a factor >= 1.0. Got {factor}')
        check_mode('ReduceLROnPlateau', mode)
        for argument, value in (('patience', patience), ('cooldown', cooldown),
                                ('min_lr', min_lr)):
            check_non_negative('ReduceLROnPlateau', argument, value)
        unknown = sorted(set(kwargs) - {'epsilon'})
        if unknown:
            raise TypeError(f'ReduceLROnPlateau: unexpected keyword argument(s) '
                            f'{", ".join(unknown)}')
        if 'epsilon' in kwargs:
            warnings.warn('ReduceLROnPlateau: `epsilon` is deprecated; use `min_delta`',
                          DeprecationWarning, stacklevel=2)
            min_delta = kwargs['epsilon']
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self._reset()

    def _reset(self):
        self._maximize = self.mode == 'max' or (self.mode == 'auto' and 'acc' in self.monitor)
        self.best = -math.inf if self._maximize else math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_train_begin(self, logs=None):
        float_learning_rate('ReduceLROnPlateau', self.model)
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        old_lr = float_learning_rate('ReduceLROnPlateau', self.model)
        if logs is not None:
            logs['lr'] = old_lr
        current = monitored_value(self.model, self.monitor, logs,
                                  'Learning rate reduction is conditioned on metric '
                                  '`{monitor}` which is not available.')
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improves(current):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience and old_lr > self.min_lr:
                new_lr = max(old_lr * self.factor, self.min_lr)
                self.model.optimizer.learning_rate = new_lr
                if self.verbose > 0:
                    print_on_chief(self.model, '\nEpoch %05d: ReduceLROnPlateau reducing '
                                               'learning rate to %s.' % (epoch + 1, new_lr))
                self.cooldown_counter = self.cooldown
                self.wait = 0

    def _improves(self, current):
        if self._maximize:
            return current > self.best + self.min_delta
        return current < self.best - self.min_delta


class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch from ``schedule``.

    Args:
        schedule: ``schedule(epoch, lr) -> float``, with the 0-based epoch and
            the current rate; a function of one argument is called as
            ``schedule(epoch)``.
        verbose: 1 prints each new rate.

    Raises:
        TypeError: If ``schedule`` is not callable.
        ValueError: (At an epoch's start) if ``schedule`` returns no float.
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f'LearningRateScheduler: schedule must be callable, got {schedule!r}')
        self.schedule = schedule
        self.verbose = verbose
        self._passes_rate = _accepts_two_arguments(schedule)

    def on_train_begin(self, logs=None):
        float_learning_rate('LearningRateScheduler', self.model)

    def on_epoch_begin(self, epoch, logs=None):
        lr = float_learning_rate('LearningRateScheduler', self.model)
        lr = self.schedule(epoch, lr) if self._passes_rate else self.schedule(epoch)
        if not isinstance(lr, (float, np.floating)):
            raise ValueError(f'The output of the "schedule" function should be float, got '
                             f'{lr!r} at epoch {epoch}')
        self.model.optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print_on_chief(self.model, '\nEpoch %05d: LearningRateScheduler setting learning '
                                       'rate to %s.' % (epoch + 1, lr))

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs['lr'] = float_learning_rate('LearningRateScheduler', self.model)


def _accepts_two_arguments(function):
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        # Some built-in callables have no signature to read; Keras tries (epoch, lr) first.
        return True
    try:
        signature.bind(0, 0.0)
    except TypeError:
        return False
    return True
