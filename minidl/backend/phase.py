"""The learning phase: whether computations run as in training (1) or in test (0).

minidl passes ``training`` to each layer's ``call`` (True in ``fit``, False
in ``predict``): layers pass it on to :func:`in_train_phase`. Without it,
:func:`learning_phase` decides: 0 unless :func:`set_learning_phase` set it.
Its value doubles as an input of :func:`~minidl.backend.function` that
feeds the phase: ``K.function([model.input, K.learning_phase()], [y])``.

The phase set here is one setting for the whole process, as in Keras; no
part of minidl changes it while computing (``fit``, ``predict`` and
``function`` pass their phase along instead), so threads do not disturb
each other through it.
"""

from minidl.backend.control import switch
from minidl.layers.symbolic import SymbolicTensor

_phase = {'value': None}


class LearningPhase(int):
    """The value of :func:`learning_phase`: 0 or 1, marked as the phase for ``function``."""

    def __repr__(self):
        return f'LearningPhase({int(self)})'


def learning_phase():
    """The learning phase set with :func:`set_learning_phase`, else 0 (test)."""
    return LearningPhase(_phase['value'] or 0)


def set_learning_phase(value):
    """Fix the learning phase: 0 (test) or 1 (training)."""
    if value not in (0, 1):
        raise ValueError(f'the learning phase is 0 or 1, got {value!r}')
    _phase['value'] = int(value)


def reset_learning_phase():
    """Forget the phase set with :func:`set_learning_phase`."""
    _phase['value'] = None


def in_train_phase(x, alt, training=None):
    """``x`` in the training phase, ``alt`` otherwise (either may be a callable making it).

    Args:
        x: What to return in training.
        alt: What to return otherwise.
        training: The phase (bool, 0/1, or a boolean tensor); by default
            :func:`learning_phase`.
    """
    if training is None:
        training = learning_phase()
    if isinstance(training, SymbolicTensor) or getattr(training, 'ndim', 0) > 0:
        return switch(training, x, alt)
    chosen = x if bool(training) else alt
    return chosen() if callable(chosen) else chosen


def in_test_phase(x, alt, training=None):
    """``x`` in the test phase, ``alt`` otherwise."""
    return in_train_phase(alt, x, training)
