"""Training that survives being stopped: a full checkpoint after every epoch, resumed bit for bit.

A 2-core machine shared with other work may not finish a recipe in one
sitting. :func:`fit_resumable` saves the whole model after each epoch
(``epoch-NNN.h5`` in a checkpoint directory: weights, the optimizer's slots
and iterations, and the model's random generators, whose state is also the
next epoch's batch order; see :mod:`minidl.saving`). Run again with the same
directory, it loads the latest checkpoint and continues with
``initial_epoch``, so a run stopped and resumed any number of times writes
the same bits as one that never stopped. Older checkpoints are removed, the
last :data:`KEEP` kept. A checkpoint whose learning rate is not the one the
schedule gives its last epoch was written by another recipe (a changed
schedule, same directory): it is refused rather than continued.
"""

import math
import os
import re

from minidl.callbacks import Callback, LearningRateScheduler, ModelCheckpoint
from minidl.callbacks.learning_rate import float_learning_rate
from minidl.saving import load_model

KEEP = 2
_NAME = re.compile(r'epoch-(\d{3})\.h5')


def checkpoints(directory):
    """``[(epochs done, path)]`` of the checkpoints in ``directory``, oldest first."""
    if not os.path.isdir(directory):
        return []
    found = [(int(match.group(1)), os.path.join(directory, name))
             for name in os.listdir(directory) for match in [_NAME.fullmatch(name)] if match]
    return sorted(found)


class _Prune(Callback):
    """Removes all but the :data:`KEEP` newest checkpoints after each epoch's save."""

    def __init__(self, directory):
        super().__init__()
        self.directory = directory

    def on_epoch_end(self, epoch, logs=None):
        for _, path in checkpoints(self.directory)[:-KEEP]:
            os.remove(path)


def fit_resumable(build, batches, epochs, directory, schedule, verbose=2):
    """Train ``build()``'s model for ``epochs`` epochs, or finish the run saved in ``directory``.

    Args:
        build: Returns a new compiled model; called only when ``directory``
            holds no checkpoint (seed minidl inside it, so the start is the
            same on every call).
        batches: A ``minidl.data.Sequence`` of ``(x, y)`` batches, the same on every call.
        epochs: The run's total number of epochs.
        directory: Where the checkpoints are written and looked for.
        schedule: ``epoch -> learning rate`` (a ``LearningRateScheduler``'s function).
        verbose: ``fit``'s verbosity.

    Returns:
        ``(model, epochs done before this call)``.

    Raises:
        ValueError: If the latest checkpoint was trained at another learning
            rate than ``schedule`` gives its last epoch.
    """
    os.makedirs(directory, exist_ok=True)
    saved = checkpoints(directory)
    if saved:
        done, path = saved[-1]
        model = load_model(path)
        _check_schedule(model, schedule, done, path)
    else:
        done, model = 0, build()
    if done < epochs:
        callbacks = [LearningRateScheduler(schedule),
                     ModelCheckpoint(os.path.join(directory, 'epoch-{epoch:03d}.h5')),
                     _Prune(directory)]
        model.fit_generator(batches, epochs=epochs, initial_epoch=done, shuffle=True,
                            verbose=verbose, callbacks=callbacks)
    return model, done


def _check_schedule(model, schedule, done, path):
    # The optimizer saved in a checkpoint holds the rate its last epoch ran at; a run
    # continued under another schedule would write bits no recipe reproduces.
    trained_at, expected = float_learning_rate('fit_resumable', model), schedule(done - 1)
    if not math.isclose(trained_at, expected, rel_tol=1e-6):
        raise ValueError(f'{path}: epoch {done} was trained at learning rate {trained_at:g}, '
                         f'but the schedule gives it {expected:g}: these checkpoints belong '
                         f'to another schedule; move them or train into another directory')
