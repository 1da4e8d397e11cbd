"""Stateful metrics whose state is a vector of exact sums.

A metric accumulates, batch after batch, a few float64 totals on the host
(for a mean: the weighted sum of values and the total weight) and computes
its value from them. Totals from several processes (or several shards of a
data set) add up to the totals of the whole, so a distributed loop sums
``metric.totals`` across processes and calls ``metric.result_of(summed)``: the
value is exact over the whole data set, never a mean of means::

    metric = CategoricalAccuracy()
    for x, y in batches:
        metric.update_state(y, model(x))
    metric.result() == metric.result_of(metric.totals)

``update_state`` records no autograd graph and moves only one or two
numbers per batch from the device to the host.
"""

import numpy as np

from minidl import config
from minidl.compute import get_array_module, is_array, to_numpy
from minidl.naming import snake_case
from minidl.tensor import Tensor, no_grad


class Metric:
    """Base class: subclasses set ``state_size`` and define ``update_state`` and ``result_of``.

    Args:
        name: The metric's name, the key of its value in ``History.history``
            (default: the class name in snake case).
        dtype: Kept for Keras compatibility and in the config; totals are
            always float64.
    """

    state_size = 1

    def __init__(self, name=None, dtype=None):
        self.name = name or snake_case(type(self).__name__)
        self.dtype = np.dtype(dtype or config.default_dtype).name
        self._totals = np.zeros(self.state_size)

    def update_state(self, *args, **kwargs):
        """Add one batch to the totals."""
        raise NotImplementedError(f'{type(self).__name__} must define update_state')

    def result_of(self, totals):
        """The metric's value (a float) for the accumulators ``totals``."""
        raise NotImplementedError(f'{type(self).__name__} must define result_of')

    def result(self):
        """The metric's value over every batch since the last reset, as a Python float."""
        return float(self.result_of(self._totals))

    def reset_state(self):
        """Forget every batch seen."""
        self._totals = np.zeros(self.state_size)

    def reset_states(self):
        """Keras's older name of :meth:`reset_state`."""
        self.reset_state()

    @property
    def totals(self):
        """A float64 copy of the accumulators, which add up across data shards."""
        return self._totals.copy()

    @totals.setter
    def totals(self, totals):
        self.set_totals(totals)

    def set_totals(self, totals):
        """Replace the accumulators, e.g. by their sum over processes."""
        totals = np.array(to_numpy(totals), dtype=np.float64)
        if totals.shape != (self.state_size,):
            raise ValueError(f'{self.name}: totals must have shape ({self.state_size},), got '
                             f'{totals.shape}')
        self._totals = totals

    def __call__(self, *args, **kwargs):
        """Update the state with one batch and return the value so far."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {'name': self.name, 'dtype': self.dtype}

    @classmethod
    def from_config(cls, config_dict):
        return cls(**config_dict)

    def __repr__(self):
        return f'<{type(self).__name__} name={self.name!r} result={self.result():.6g}>'


def weighted_sum_and_weight(values, sample_weight=None):
    """``[sum(values * w), sum of w broadcast to values]`` as a float64 numpy array.

    Without weights, every value weighs one. Weights align with the leading
    axes of ``values``: weights of shape ``(batch,)`` weigh every element of a
    sample (every time step of a sequence output).

    Raises:
        ValueError: If the weights do not broadcast to ``values``.
    """
    values = _array(values)
    xp = get_array_module(values)
    if sample_weight is None:
        return np.array([float(values.sum(dtype=xp.float64)), values.size], dtype=np.float64)
    weights = _array(sample_weight)
    if get_array_module(weights) is not xp:
        weights = xp.asarray(to_numpy(weights))
    given_shape = weights.shape
    if weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
        weights = weights.reshape(weights.shape[:-1])
    weights = weights.reshape(weights.shape + (1,) * (values.ndim - weights.ndim))
    if weights.ndim != values.ndim or any(
            w not in (1, n) for w, n in zip(weights.shape, values.shape)):
        raise ValueError(f'sample_weight of shape {given_shape} does not broadcast to the '
                         f'values of shape {values.shape}')
    sums = xp.stack([xp.multiply(values, weights, dtype=xp.float64).sum(),
                     weights.sum(dtype=xp.float64)])
    sums = to_numpy(sums).astype(np.float64)
    # Each weight stands for this many values along the axes it was broadcast over.
    sums[1] *= values.size // weights.size if weights.size else 0
    return sums


def _array(values):
    if isinstance(values, Tensor):
        return values.data
    return values if is_array(values) else np.asarray(values, dtype=np.float64)


class Mean(Metric):
    """The weighted mean of every value given to ``update_state(values, sample_weight=None)``.

    Totals: ``[weighted sum, total weight]``; the mean of nothing is 0.
    """

    state_size = 2

    def update_state(self, values, sample_weight=None):
        self._totals += weighted_sum_and_weight(values, sample_weight)

    def result_of(self, totals):
        total, weight = totals
        return float(total / weight) if weight else 0.0


class Sum(Metric):
    """The weighted sum of every value given to ``update_state(values, sample_weight=None)``."""

    def update_state(self, values, sample_weight=None):
        self._totals += weighted_sum_and_weight(values, sample_weight)[:1]

    def result_of(self, totals):
        return float(totals[0])


class MeanMetricWrapper(Mean):
    """The weighted mean of ``fn(y_true, y_pred, **kwargs)``, a per-sample function.

    Args:
        fn: Function of ``(y_true, y_pred)`` returning per-sample values (a
            Tensor or array, e.g. of shape ``(batch,)`` or ``(batch, steps)``).
        name: The metric's name (default: ``fn.__name__``).
        dtype: As for :class:`Metric`.
        **kwargs: Keyword arguments passed to ``fn``.
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        if not callable(fn):
            raise TypeError(f'MeanMetricWrapper: fn must be callable, got {fn!r}')
        super().__init__(name or getattr(fn, '__name__', None), dtype)
        self.fn = fn
        self.fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        with no_grad():
            values = self.fn(y_true, y_pred, **self.fn_kwargs)
        super().update_state(values, sample_weight)

    def get_config(self):
        config = {**super().get_config(), **self.fn_kwargs}
        if type(self) is MeanMetricWrapper:
            # A function; ``metrics.serialize`` writes it by name.
            config['fn'] = self.fn
        return config
