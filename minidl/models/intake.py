"""How fit, evaluate and predict take their data, and the checks made before the first step.

In-memory data (arrays, Tensors, lists or dicts of them) is checked whole
before anything is computed, so that bad data changes nothing: shapes and
sample counts, NaN and infinity, weights, targets against the losses. A
``Sequence`` or a generator is checked batch by batch as it comes.
"""

import numpy as np

from minidl.models import loop
from minidl.models.feed import ArrayFeed, Batch, as_list, make_feed
from minidl.models.weighting import (
    ClassWeightedFeed, apply_class_weight, as_weight_list, check_class_weight,
    checked_sample_weight, per_output_sample_weights)
from minidl.tensor import Tensor

_TASKS = {'fit': 'train on', 'train_on_batch': 'train on', 'evaluate': 'evaluate',
          'test_on_batch': 'evaluate', 'predict': 'predict', 'predict_on_batch': 'predict'}


class DataIntake:
    """The data-taking methods of :class:`~minidl.models.Model`."""

    def _validation_feed(self, data, batch_size, steps):
        """The feed of ``validation_data``, read by Keras 2.2.4's rule.

        A ``Sequence`` or a generator yields its own ``(x, y[, sample_weight])``
        batches. Anything else must be a tuple or a list, and its length
        alone decides: 2 items are ``(x_val, y_val)``, 3 are ``(x_val, y_val,
        val_sample_weight)``, other lengths are an error. A model with several
        inputs therefore takes ``([x1, x2], y_val)``, never ``[x1, x2]``; and
        ``(x_val, None)`` validates a model that needs no targets.
        """
        if isinstance(data, (list, tuple)):
            if len(data) not in (2, 3):
                raise ValueError(f'validation_data must hold 2 items (x_val, y_val) or 3 '
                                 f'(x_val, y_val, val_sample_weight); it has {len(data)}')
            x, y, weight = (tuple(data) + (None,))[:3]
            return self._feed('fit', x, y, weight, None, batch_size, steps, shuffle=False)
        if isinstance(data, (np.ndarray, dict, Tensor)):
            raise ValueError(f'validation_data must be a tuple (x_val, y_val) or (x_val, y_val, '
                             f'val_sample_weight), a Sequence or a generator; got a '
                             f'{type(data).__name__}')
        return self._feed('fit', data, None, None, None, batch_size, steps, shuffle=False)

    def _feed(self, method, x, y, sample_weight, class_weight, batch_size, steps, shuffle):
        """The batches of ``method``'s data; in-memory data is checked whole first,
        so that bad data is refused before anything is computed or changed."""
        if x is None:
            raise ValueError('no input data given (x is None)')
        if isinstance(x, (np.ndarray, Tensor, list, tuple, dict)):
            batch_size = batch_size_of(batch_size)
            xs, ys, weight = self._arrays(method, x, y, sample_weight, class_weight)
            return ArrayFeed(xs, ys, weight, batch_size, shuffle, self.shuffle_generator)
        if _is_scalar(x):
            raise ValueError(f'{method}: x must be an array whose first axis runs over the '
                             f'samples (or a list or dict of them, a Sequence or a generator); '
                             f'got the scalar {x!r}')
        if y is not None or sample_weight is not None:
            raise ValueError('with a generator or Sequence as x, y and sample_weight come '
                             'from its batches; do not pass them separately')
        feed = make_feed(x, None, None, None, steps, shuffle, self.shuffle_generator)
        if class_weight is None:
            return feed
        check_class_weight(class_weight)
        return ClassWeightedFeed(feed, class_weight)

    def _batch(self, method, x, y, sample_weight, class_weight):
        if _is_scalar(x):
            raise ValueError(f'{method}: x must be an array whose first axis runs over the '
                             f'samples (or a list or dict of them); got the scalar {x!r}')
        xs, ys, weight = self._arrays(method, x, y, sample_weight, class_weight)
        return Batch(xs, ys, weight, slice(0, len(xs[0])))

    def _arrays(self, method, x, y, sample_weight, class_weight):
        """Inputs, targets and weights as lists of arrays of one length, checked.

        Targets are those of the outputs given a loss (all of them by default).
        Everything is checked here, before the first step: no NaN or infinity,
        at least one sample, weights finite and not negative, and targets that
        fit the losses (class indices in range, one-hot shapes).
        """
        xs = self._by_name(x, self.input_names if self.outputs else None, 'x')
        target_names = None if self.objectives is None else self.objectives.target_names
        ys = None if y is None else self._by_name(y, target_names, 'y')
        for what, arrays in (('x', xs), ('y', ys or [])):
            for index, array in enumerate(arrays):
                if array.ndim == 0:
                    raise ValueError(f'{method}: {what}[{index}] is a scalar; it needs a first '
                                     f'axis that runs over the samples')
        temporal = self._temporal_weights()
        weight = self._checked_sample_weight(sample_weight)
        weights = [] if weight is None else [w for w in as_weight_list(weight) if w is not None]
        if len({len(a) for a in xs + (ys or []) + weights}) > 1:
            # The names only for the message: train_on_batch runs this every step.
            lengths = {f'x[{i}]': len(a) for i, a in enumerate(xs)}
            lengths.update({f'y[{i}]': len(a) for i, a in enumerate(ys or [])})
            if isinstance(weight, list):
                lengths.update({f'sample_weight[{i}]': len(w)
                                for i, w in enumerate(weight) if w is not None})
            elif weight is not None:
                lengths['sample_weight'] = len(weight)
            raise ValueError(f'the arrays have different numbers of samples: {lengths}')
        if class_weight is not None:
            if ys is None or len(ys) != 1:
                raise ValueError('class_weight needs exactly one target array')
            if temporal:
                raise ValueError('class_weight does not combine with sample_weight_mode='
                                 '"temporal"; give the weight of each time step in sample_weight')
            weight = apply_class_weight(class_weight, ys[0], weight)
        if not len(xs[0]):
            raise ValueError(f'{method}: the data has no samples (x[0] has shape '
                             f'{tuple(xs[0].shape)}); there is nothing to {_TASKS[method]}')
        loop.check_finite(xs, 'x')
        loop.check_finite(ys, 'y')
        if ys is not None and self._compile_args is not None:
            self._check_targets(xs, ys)
        check_input_shapes(xs, [tuple(t.shape) for t in self.inputs], self.input_names)
        return xs, ys, weight

    def _checked_sample_weight(self, sample_weight):
        """One checked weight array for all outputs, or a list with one per output
        with a loss (an array or None) when given as a list or dict by output."""
        if sample_weight is None:
            return None
        objectives = self.objectives
        names = objectives.target_names if objectives is not None else ['output']
        weights = per_output_sample_weights(sample_weight, names)
        if not isinstance(weights, list):
            return checked_sample_weight(weights, self._temporal_weights())
        temporal = [objectives.temporal[index] for index in objectives.target_indices]
        return [None if w is None else checked_sample_weight(w, t, f'sample_weight[{i}]')
                for i, (w, t) in enumerate(zip(weights, temporal))]

    def _check_targets(self, xs, ys):
        """Check ``ys`` against the losses and the outputs' shapes (a model built
        from its first data is built now, from ``xs``'s shapes)."""
        if not self.built:
            self._build_for(xs)
        if self.objectives is None and self.outputs:
            self._make_objectives([t.shape for t in self.outputs])
        if self.objectives is not None:
            self.objectives.check_targets(ys)

    def _build_for(self, xs):
        """Build the graph from the data's shapes when the model is built that way
        (Sequential); a subclassed model is built by its first call."""

    def _temporal_weights(self):
        """Whether compile asked for one sample weight per time step."""
        mode = (self._compile_args or {}).get('sample_weight_mode')
        modes = mode.values() if isinstance(mode, dict) else \
            mode if isinstance(mode, (list, tuple)) else [mode]
        return 'temporal' in modes

    def _by_name(self, data, names, what):
        if isinstance(data, dict):
            if names is None:
                raise ValueError(f'{what} given by name, but this model has no named '
                                 f'inputs/outputs')
            unknown = sorted(set(data) - set(names))
            if unknown:
                raise ValueError(f'{what} names {unknown}, which the model does not have; '
                                 f'expected {names}')
            return [_as_array(data[name]) for name in names]
        items = [_as_array(item) for item in as_list(data)]
        if names == [] and what == 'y':
            raise ValueError(f'model {self.name!r} has no output with a loss, so it takes no '
                             f'targets; pass y=None')
        if names is not None and len(items) != len(names):
            raise ValueError(f'model {self.name!r} expects {len(names)} {what} array(s) '
                             f'({", ".join(names)}), got {len(items)}')
        return items


def check_input_shapes(xs, shapes, names):
    """ValueError if the samples of ``xs`` do not have the model's input ``shapes``
    (``None`` sizes match any), so that data of the wrong size (validation data,
    too) is refused before the first step rather than when its batch comes.

    Nothing is checked for a model whose inputs are not known yet (``shapes``
    empty: a subclassed model, or a Sequential built by its first data).
    """
    for index, (array, shape, name) in enumerate(zip(xs, shapes, names)):
        expected, got = shape[1:], tuple(array.shape[1:])
        if len(got) != len(expected) or any(e is not None and e != g
                                            for e, g in zip(expected, got)):
            raise ValueError(f'x[{index}] is incompatible with input {name!r}: expected '
                             f'shape {(None,) + tuple(expected)}, found {tuple(array.shape)}')


def batch_size_of(batch_size):
    """``batch_size`` checked, 32 when None (Keras's default)."""
    if batch_size is None:
        return 32
    check_count(batch_size, 'batch_size', minimum=1)
    return int(batch_size)


def check_count(value, name, minimum):
    """Raise a ValueError unless ``value`` is an integer >= ``minimum`` (True is not 1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < minimum:
        kind = 'a positive integer' if minimum == 1 else f'an integer >= {minimum}'
        raise ValueError(f'{name} must be {kind}, got {value!r}')


def _is_scalar(x):
    """Whether ``x`` is one number or string rather than data with a samples axis."""
    return isinstance(x, (int, float, complex, str, bytes, np.generic)) or \
        (isinstance(x, (np.ndarray, Tensor)) and x.ndim == 0)


def _as_array(item):
    return item if isinstance(item, Tensor) else np.asarray(item)
