"""Learning-rate schedules: the learning rate as a function of the optimizer's step.

An optimizer given a schedule as its ``learning_rate`` evaluates it at
``optimizer.iterations`` (the number of updates already applied) before each
update, as Keras 2 does::

    schedule = ExponentialDecay(0.1, decay_steps=1000, decay_rate=0.96)
    optimizer = minidl.optimizers.SGD(learning_rate=schedule)

``get`` / ``serialize`` / ``deserialize`` convert schedules to and from
``{'class_name': ..., 'config': ...}`` dicts, the form they take in an
optimizer's config.
"""

import bisect
import math

from minidl.registry import Registry


class LearningRateSchedule:
    """Base class: subclasses define ``__call__(step) -> float`` and ``get_config``.

    ``from_config(config)`` calls the constructor with the config's entries,
    so a subclass whose ``get_config`` returns its constructor's arguments
    round-trips without more code.
    """

    def __call__(self, step):
        raise NotImplementedError

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_positive(schedule, argument, value):
    if not value > 0:
        raise ValueError(f'{schedule}: {argument} must be positive, got {value!r}')


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``.

    Args:
        initial_learning_rate: The rate at step 0.
        decay_steps: Steps over which the rate is multiplied by ``decay_rate``.
        decay_rate: The factor per ``decay_steps`` steps.
        staircase: Use ``floor(step / decay_steps)``: the rate changes in steps.
        name: Optional name, kept in the config.
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        _check_positive('ExponentialDecay', 'decay_steps', decay_steps)
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = decay_steps
        self.decay_rate = float(decay_rate)
        self.staircase = bool(staircase)
        self.name = name

    def __call__(self, step):
        progress = float(step) / self.decay_steps
        if self.staircase:
            progress = math.floor(progress)
        return self.initial_learning_rate * self.decay_rate ** progress

    def get_config(self):
        return {'initial_learning_rate': self.initial_learning_rate,
                'decay_steps': self.decay_steps, 'decay_rate': self.decay_rate,
                'staircase': self.staircase, 'name': self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """A constant rate between boundaries.

    ``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, and ``values[-1]`` after
    the last boundary.

    Args:
        boundaries: Strictly increasing steps.
        values: One more value than boundaries.
        name: Optional name, kept in the config.
    """

    def __init__(self, boundaries, values, name=None):
        boundaries, values = list(boundaries), list(values)
        if len(values) != len(boundaries) + 1:
            raise ValueError(f'PiecewiseConstantDecay: values must have one more entry than '
                             f'boundaries, got {len(values)} values for {len(boundaries)} '
                             f'boundaries')
        if any(later <= earlier for earlier, later in zip(boundaries, boundaries[1:])):
            raise ValueError(f'PiecewiseConstantDecay: boundaries must be strictly increasing, '
                             f'got {boundaries}')
        self.boundaries = boundaries
        self.values = [float(value) for value in values]
        self.name = name

    def __call__(self, step):
        return self.values[bisect.bisect_left(self.boundaries, step)]

    def get_config(self):
        return {'boundaries': list(self.boundaries), 'values': list(self.values), 'name': self.name}


class CosineDecay(LearningRateSchedule):
    """Half a cosine from ``initial_learning_rate`` down to ``alpha * initial_learning_rate``.

    ``initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha)``
    with ``s = min(step, decay_steps)``: the rate stays at its floor after
    ``decay_steps``.

    Args:
        initial_learning_rate: The rate at step 0.
        decay_steps: Steps to reach the floor.
        alpha: The floor as a fraction of ``initial_learning_rate``.
        name: Optional name, kept in the config.
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None):
        _check_positive('CosineDecay', 'decay_steps', decay_steps)
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = decay_steps
        self.alpha = float(alpha)
        self.name = name

    def __call__(self, step):
        progress = min(float(step), self.decay_steps) / self.decay_steps
        cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
        return self.initial_learning_rate * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {'initial_learning_rate': self.initial_learning_rate,
                'decay_steps': self.decay_steps, 'alpha': self.alpha, 'name': self.name}


REGISTRY = Registry('learning-rate schedule', base=LearningRateSchedule, functions=False,
                    none=Registry.REFUSED)
for _cls in (ExponentialDecay, PiecewiseConstantDecay, CosineDecay):
    REGISTRY.register(_cls)


def serialize(schedule):
    """A schedule as its ``{'class_name', 'config'}`` dict."""
    return REGISTRY.serialize(schedule)


def deserialize(config, custom_objects=None):
    """The schedule a ``{'class_name', 'config'}`` dict describes.

    Args:
        config: A dict from :func:`serialize`.
        custom_objects: Optional dict of user schedule classes by name.
    """
    return REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """A schedule from an instance (returned as is) or a ``{'class_name', 'config'}`` dict."""
    return REGISTRY.get(identifier)
