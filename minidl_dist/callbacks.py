"""Callbacks for scripts written for Horovod: broadcasting weights, warming the rate up."""

import math
from numbers import Real

from minidl.callbacks import Callback
from minidl.callbacks.base import print_on_chief
from minidl.callbacks.learning_rate import float_learning_rate
from minidl_dist import comm
from minidl_dist.model_sync import broadcast_model


class BroadcastWeights(Callback):
    """Copy ``root_rank``'s weights and optimizer state to all ranks when training starts.

    Horovod's ``BroadcastGlobalVariablesCallback``. A DistributedOptimizer
    already broadcasts rank 0's model at the start of ``fit``; this callback
    is for other roots and for scripts that keep Horovod's structure.

    Args:
        root_rank: The rank whose values are copied.
    """

    def __init__(self, root_rank=0):
        super().__init__()
        self.root_rank = root_rank

    def on_train_begin(self, logs=None):
        broadcast_model(comm.world(), self.model, self.root_rank)


class LearningRateWarmup(Callback):
    """Goyal et al.'s gradual warm-up: the rate climbs, batch by batch, to ``initial_lr * scale``.

    Large global batches train as well as small ones when the learning rate
    grows with them (the linear scaling rule: ``scale`` times the batch,
    ``scale`` times the rate), provided the rate starts low: over the first
    ``warmup_epochs`` the rate of batch ``b`` of epoch ``e`` is::

        initial_lr * (1 + (scale - 1) * min(1, (e + (b + 1) / steps_per_epoch) / warmup_epochs))

    so that the last batch of the warm-up trains at ``initial_lr * scale``
    (Horovod's ``LearningRateWarmupCallback`` counts the same way). After the
    warm-up the callback leaves the rate alone, to other schedules. It acts
    on every rank alike (the schedule is a function of the epoch and batch),
    so the ranks keep the same weights; without mpirun ``scale`` is 1 and the
    rate stays ``initial_lr``, unless given.

    Args:
        warmup_epochs: Epochs (a positive number, possibly fractional) the climb takes.
        initial_lr: The rate of one rank's batch; None reads the optimizer's
            rate when the first ``fit`` with this callback starts (later
            ones would read the warmed-up rate). A ``fit`` resumed inside
            the warm-up (``initial_epoch`` > 0) needs it, as the saved
            optimizer then holds a rate of the climb.
        scale: The factor reached; None for the number of ranks the model
            trains on (``model.strategy.size``; 1 without minidl_dist).
        steps_per_epoch: Batches per epoch; None takes ``fit``'s.
        verbose: 1 prints (on rank 0) when the warm-up ends.

    Raises:
        ValueError: For bad arguments; when ``fit`` starts inside the warm-up
            at an epoch after the first without ``initial_lr``; or when the
            number of batches per epoch is unknown.
    """

    def __init__(self, warmup_epochs=5, initial_lr=None, scale=None, steps_per_epoch=None,
                 verbose=0):
        super().__init__()
        for name, value in (('warmup_epochs', warmup_epochs), ('initial_lr', initial_lr),
                            ('scale', scale), ('steps_per_epoch', steps_per_epoch)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, Real)
                                      or not value > 0 or not math.isfinite(value)):
                raise ValueError(f'LearningRateWarmup: {name} must be a positive number, '
                                 f'got {value!r}')
        if warmup_epochs is None:
            raise ValueError('LearningRateWarmup: warmup_epochs must be a positive number')
        self.warmup_epochs, self.initial_lr, self.scale = warmup_epochs, initial_lr, scale
        self.steps_per_epoch, self.verbose = steps_per_epoch, verbose
        self._plan = None  # (initial rate, scale, steps per epoch) of the current fit
        self._epoch = None  # the current epoch; None before a fit's first

    def on_train_begin(self, logs=None):
        steps = self.steps_per_epoch or self.params.get('steps')
        if not steps:
            raise ValueError('LearningRateWarmup: fit does not say how many batches an epoch '
                             'has; give steps_per_epoch')
        scale = self.scale if self.scale is not None else getattr(self.model.strategy, 'size', 1)
        if self._plan is not None and self.initial_lr is None:
            rate = self._plan[0]
        else:
            rate = self.initial_lr or float_learning_rate('LearningRateWarmup', self.model)
        self._plan = float(rate), float(scale), steps
        self._epoch = None

    def on_epoch_begin(self, epoch, logs=None):
        if self._epoch is None and 0 < epoch < self.warmup_epochs and self.initial_lr is None:
            raise ValueError(f'LearningRateWarmup: fit starts at epoch {epoch}, inside the '
                             f'warm-up, where the optimizer holds a rate of the climb; give '
                             f'initial_lr (the rate before scaling)')
        self._epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if self._epoch < self.warmup_epochs:
            self.model.optimizer.learning_rate = self.rate(self._epoch, batch)

    def on_epoch_end(self, epoch, logs=None):
        if self.verbose and epoch < self.warmup_epochs <= epoch + 1:
            print_on_chief(self.model, f'\nEpoch {epoch + 1:05d}: LearningRateWarmup reached '
                                       f'the learning rate {self.rate(epoch, None)}.')

    def rate(self, epoch, batch):
        """The warm-up's rate for ``batch`` of ``epoch`` (None: the epoch's last batch)."""
        initial, scale, steps = self._plan
        done = epoch + (steps if batch is None else batch + 1) / steps
        return initial * (1 + (scale - 1) * min(1.0, done / self.warmup_epochs))
