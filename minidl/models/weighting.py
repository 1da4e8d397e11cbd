"""Sample and class weights: their shapes checked, class weights turned into sample weights.

A sample weight has shape ``(samples,)`` (``(samples, 1)`` is accepted),
or, when ``compile(sample_weight_mode='temporal')``, ``(samples,
timesteps)``: one weight per time step of a sequence output. A
``class_weight`` dict gives each sample the weight of its class (the
argmax of a one-hot target), multiplied into its sample weight; with a
Sequence or a generator it is applied to every batch as it comes.

A model with several outputs takes one array for all of them, or, as
Keras 2's ``standardize_sample_weights``, a list with one entry per output
that has a loss, or a dict by output name; an output given None (or left
out of the dict) weighs its samples alike.
"""

import numpy as np

from minidl.compute import to_numpy
from minidl.models.feed import Batch
from minidl.tensor import Tensor


def checked_sample_weight(sample_weight, temporal, what='sample_weight'):
    """The weights as a float32 array of shape (samples,), or (samples, timesteps)
    when ``temporal``; a ValueError (naming ``what``) for any other shape."""
    weight = np.asarray(to_numpy(sample_weight), dtype='float32')
    check_weights(weight, what)
    if temporal:
        if weight.ndim != 2:
            raise ValueError(f'with sample_weight_mode="temporal", {what} must have shape '
                             f'(samples, timesteps); got shape {weight.shape}')
        return weight
    if weight.ndim == 2 and weight.shape[1] == 1:
        weight = weight[:, 0]
    if weight.ndim != 1:
        raise ValueError(f'{what} must have shape (samples,), got {weight.shape}; for one '
                         f'weight per time step, compile with sample_weight_mode="temporal"')
    return weight


def as_weight_list(weight):
    """A batch's weights as a list: its per-output list, or ``[weight]`` for one array."""
    return weight if isinstance(weight, list) else [weight]


def per_output_sample_weights(sample_weight, target_names):
    """``sample_weight`` as one array for every output, or a list with one per target.

    Args:
        sample_weight: An array (or Tensor) for all outputs; a list or tuple
            with one entry (array or None) per output with a loss; or a dict
            by those outputs' names. A one-entry list whose entry is not a
            number is that output's weights (Keras 2's reading).
        target_names: Names of the outputs with a loss, in order.

    Returns:
        None, one array for all outputs (as given; a list of numbers made an
        array), or a list of ``len(target_names)`` entries (each as given, or
        None).

    Raises:
        ValueError: For a list of another length, or a dict naming an output
            without a loss.
    """
    if isinstance(sample_weight, dict):
        unknown = sorted(set(sample_weight) - set(target_names))
        if unknown:
            raise ValueError(f'sample_weight names {unknown}, which are not outputs with a loss; '
                             f'expected names among {target_names}')
        weights = [sample_weight.get(name) for name in target_names]
    elif isinstance(sample_weight, (list, tuple)) and _is_per_output(sample_weight,
                                                                     target_names):
        if len(sample_weight) != len(target_names):
            raise ValueError(f'sample_weight is a list of {len(sample_weight)} arrays, but the '
                             f'model has {len(target_names)} output(s) with a loss '
                             f'({", ".join(target_names)}); give one array (or None) per output')
        weights = list(sample_weight)
    else:
        return _one_array(sample_weight)
    if all(weight is None for weight in weights):
        return None
    return _one_array(weights[0]) if len(weights) == 1 else weights


def _one_array(weight):
    # A plain list of numbers is one array: lists stand for one entry per output.
    return np.asarray(weight) if isinstance(weight, (list, tuple)) else weight


def _is_per_output(sample_weight, target_names):
    if len(target_names) > 1:
        return True
    # One output: [w] holds its weights, unless it is one sample's weight.
    first = sample_weight[0] if len(sample_weight) == 1 else 0
    return first is None or getattr(first, 'ndim', np.ndim(first)) > 0


def check_weights(weights, what):
    """Raise a ValueError naming ``what`` unless every weight is finite and not negative.

    A NaN or infinite weight would make every trained weight NaN, and a
    negative one would train away from the targets.
    """
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f'{what} must hold finite, non-negative numbers; '
                         f'{what}[{", ".join(map(str, position))}] is {weights[position]}')


def check_class_weight(class_weight):
    """Raise unless ``class_weight`` maps class indices to finite, non-negative numbers."""
    if not isinstance(class_weight, dict):
        raise TypeError(f'class_weight must be a dict {{class index: weight}}, '
                        f'got {type(class_weight).__name__}')
    for key, value in class_weight.items():
        number = float(value)
        if not np.isfinite(number) or number < 0:
            raise ValueError(f'class_weight must hold finite, non-negative numbers; '
                             f'class_weight[{key!r}] is {value!r}')


def apply_class_weight(class_weight, y, weight):
    """Each sample's class weight (times its ``weight``, if any)."""
    check_class_weight(class_weight)
    labels = to_numpy(y.data) if isinstance(y, Tensor) else np.asarray(y)
    if labels.ndim > 1 and labels.shape[-1] > 1:
        labels = labels.argmax(axis=-1)
    labels = labels.reshape(len(labels), -1)[:, 0].astype(np.int64)
    missing = sorted(set(np.unique(labels).tolist()) - set(int(k) for k in class_weight))
    if missing:
        raise ValueError(f'class_weight has no weight for class(es) {missing}')
    table = np.zeros(max(int(k) for k in class_weight) + 1, dtype='float32')
    for key, value in class_weight.items():
        table[int(key)] = value
    per_sample = table[labels]
    return per_sample if weight is None else per_sample * weight


class ClassWeightedFeed:
    """The batches of a Sequence's or a generator's feed, with ``class_weight`` applied."""

    def __init__(self, feed, class_weight):
        self.feed, self.class_weight = feed, class_weight
        self.check_batches, self.batch_size, self.steps = \
            feed.check_batches, feed.batch_size, feed.steps

    def epoch(self):
        for batch in self.feed.epoch():
            if batch.y is None or len(batch.y) != 1:
                raise ValueError('class_weight needs batches with exactly one target array')
            weight = None if batch.sample_weight is None else \
                checked_sample_weight(batch.sample_weight, temporal=False)
            yield Batch(batch.x, batch.y, apply_class_weight(self.class_weight, batch.y[0], weight),
                        batch.indices)
