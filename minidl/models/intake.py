"""How fit, evaluate and predict take their data: plain functions of names, shapes and arrays.

The kind of data is told once, by :func:`kind_of`: arrays (an array, a
Tensor, or a list, tuple or dict of them), a ``Sequence``, or a generator.
In-memory arrays go through :func:`standardize_arrays` and
:func:`check_input_shapes`, which check them whole before anything is
computed, so that bad data changes nothing: sample counts, NaN and
infinity, weights, class weights and shapes. A ``Sequence`` or a
generator becomes a feed (:func:`batch_feed`) whose batches
:func:`check_batch` checks as they come.

Nothing here reads the model: :class:`~minidl.models.Model` passes its input
names and shapes, the names of its outputs with a loss, and whether its
losses weigh time steps (Keras 2's ``engine/training_utils.py`` works the
same way). Checking targets against the losses is the model's own step in
between, as it may first have to build itself from the data's shapes.
"""

import numpy as np

from minidl.compute import to_numpy
from minidl.data import Sequence
from minidl.models.feed import GeneratorFeed, SequenceFeed, as_list, by_name
from minidl.models.weighting import (
    ClassWeightedFeed, apply_class_weight, as_weight_list, check_class_weight, check_weights,
    checked_sample_weight, per_output_sample_weights)
from minidl.tensor import Tensor

# The kinds of data, as kind_of tells them.
ARRAYS, SEQUENCE, GENERATOR, SCALAR, OTHER = 'arrays', 'sequence', 'generator', 'scalar', 'other'

_TASKS = {'fit': 'train on', 'train_on_batch': 'train on', 'evaluate': 'evaluate',
          'test_on_batch': 'evaluate', 'predict': 'predict', 'predict_on_batch': 'predict'}


def kind_of(x):
    """Which kind of data ``x`` is: ``ARRAYS``, ``SEQUENCE``, ``GENERATOR``,
    ``SCALAR`` (a number or a string, never data) or ``OTHER`` (None too).

    Arrays are told first, so a list of arrays is never taken for an iterator.
    """
    if isinstance(x, (np.ndarray, Tensor, list, tuple, dict)):
        return ARRAYS
    if isinstance(x, (int, float, complex, str, bytes, np.generic)):
        return SCALAR
    if isinstance(x, Sequence):
        return SEQUENCE
    if hasattr(x, '__next__') or hasattr(x, '__iter__'):
        return GENERATOR
    return OTHER


def is_scalar(x):
    """Whether ``x`` is one number or string (a 0-d array too) rather than data with a
    samples axis."""
    return kind_of(x) == SCALAR or (isinstance(x, (np.ndarray, Tensor)) and x.ndim == 0)


def refuse_scalar(method, x, alternatives='a list or dict of them'):
    """A ValueError if ``x`` is a scalar; ``alternatives`` names the other data ``method``
    takes."""
    if is_scalar(x):
        raise ValueError(f'{method}: x must be an array whose first axis runs over the '
                         f'samples (or {alternatives}); got the scalar {x!r}')


def batch_feed(method, kind, x, y, sample_weight, class_weight, steps, shuffle, generator,
               names=(None, None)):
    """The feed of data that is not arrays: a ``Sequence`` or a generator of
    ``(x, y[, sample_weight])`` batches, with ``class_weight`` applied to each batch.

    Args:
        method: 'fit', 'evaluate' or 'predict', for errors.
        kind: ``kind_of(x)``, anything but ``ARRAYS``.
        x: The Sequence or generator.
        y, sample_weight: Must be None: they come from the batches.
        class_weight: A dict {class index: weight}, or None.
        steps: Batches per epoch (None: a Sequence's length, or until a
            generator ends).
        shuffle: Visit a Sequence's batches in a new order each epoch.
        generator: The random generator that draws that order (the model's).
        names: The model's input names and the names of its outputs with a
            loss, for batches that give ``x`` or ``y`` as a dict by name.

    Raises:
        ValueError: For None, a scalar, or ``y`` or ``sample_weight`` given.
        TypeError: For anything else that is neither.
    """
    if x is None:
        raise ValueError('no input data given (x is None)')
    if kind == SCALAR:
        refuse_scalar(method, x, 'a list or dict of them, a Sequence or a generator')
    if kind == OTHER:
        raise TypeError(f'{method}: x must be an array (or a list or dict of them), a Sequence '
                        f'or a generator of batches; got a {type(x).__name__}')
    if y is not None or sample_weight is not None:
        raise ValueError('with a generator or Sequence as x, y and sample_weight come '
                         'from its batches; do not pass them separately')
    feed = SequenceFeed(x, steps, shuffle, generator, names) if kind == SEQUENCE else \
        GeneratorFeed(x, steps, names)
    if class_weight is None:
        return feed
    check_class_weight(class_weight)
    return ClassWeightedFeed(feed, class_weight)


def validation_parts(data):
    """``(x, y, sample_weight)`` of ``validation_data``, read by Keras 2.2.4's rule.

    A ``Sequence`` or a generator yields its own batches: ``(data, None,
    None)``. Anything else must be a tuple or a list, and its length alone
    decides: 2 items are ``(x_val, y_val)``, 3 are ``(x_val, y_val,
    val_sample_weight)``, other lengths are an error. A model with several
    inputs therefore takes ``([x1, x2], y_val)``, never ``[x1, x2]``; and
    ``(x_val, None)`` validates a model that needs no targets.
    """
    if isinstance(data, (list, tuple)):
        if len(data) not in (2, 3):
            raise ValueError(f'validation_data must hold 2 items (x_val, y_val) or 3 '
                             f'(x_val, y_val, val_sample_weight); it has {len(data)}')
        return (tuple(data) + (None,))[:3]
    if kind_of(data) == ARRAYS:
        raise ValueError(f'validation_data must be a tuple (x_val, y_val) or (x_val, y_val, '
                         f'val_sample_weight), a Sequence or a generator; got a '
                         f'{type(data).__name__}')
    return data, None, None


def standardize_arrays(method, x, y, sample_weight, class_weight, *, model_name, input_names,
                       target_names, temporal, target_temporal):
    """Inputs, targets and weights as lists of arrays of one length, checked whole.

    Checked here, before the first step: every array has a samples axis, the
    arrays have one number of samples and at least one, no NaN or infinity,
    weights finite and not negative.

    Args:
        method: The Model method, for errors ('fit', 'train_on_batch', ...).
        x, y, sample_weight, class_weight: As the user gave them.
        model_name: The model's name, for errors.
        input_names: The model's input names, or None while it has no graph
            (then ``x`` may not be a dict).
        target_names: The names of the outputs with a loss, or None while the
            losses are not known (then any number of targets is taken).
        temporal: Whether compile asked for one sample weight per time step.
        target_temporal: Per target, whether its loss weighs time steps
            (with ``target_names``; used for one weight array per output).

    Returns:
        ``(xs, ys, weight)``: lists of arrays (``ys`` None without targets), and
        None, one float32 array for all outputs, or a list with one per target.
    """
    xs = arrays_by_name(x, input_names, 'x', model_name)
    ys = None if y is None else arrays_by_name(y, target_names, 'y', model_name)
    for what, arrays in (('x', xs), ('y', ys or [])):
        for index, array in enumerate(arrays):
            if array.ndim == 0:
                raise ValueError(f'{method}: {what}[{index}] is a scalar; it needs a first '
                                 f'axis that runs over the samples')
    weight = standardize_sample_weight(sample_weight, target_names, temporal, target_temporal)
    check_sample_counts(xs, ys, weight)
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
    check_finite(xs, 'x')
    check_finite(ys, 'y')
    return xs, ys, weight


def arrays_by_name(data, names, what, model_name):
    """``data`` (an array, a list, or a dict by name) as a list of arrays in ``names``'
    order; ``names`` None takes any number of arrays, but no dict."""
    if isinstance(data, dict):
        return as_list(by_name(data, names, what))
    items = as_list(data)
    if names == [] and what == 'y':
        raise ValueError(f'model {model_name!r} has no output with a loss, so it takes no '
                         f'targets; pass y=None')
    if names is not None and len(items) != len(names):
        raise ValueError(f'model {model_name!r} expects {len(names)} {what} array(s) '
                         f'({", ".join(names)}), got {len(items)}')
    return items


def standardize_sample_weight(sample_weight, target_names, temporal, target_temporal):
    """One checked weight array for all outputs, or a list with one per output
    with a loss (an array or None) when given as a list or dict by output."""
    if sample_weight is None:
        return None
    weights = per_output_sample_weights(
        sample_weight, ['output'] if target_names is None else target_names)
    if not isinstance(weights, list):
        return checked_sample_weight(weights, temporal)
    return [None if w is None else checked_sample_weight(w, t, f'sample_weight[{i}]')
            for i, (w, t) in enumerate(zip(weights, target_temporal))]


def check_sample_counts(xs, ys, weight):
    """A ValueError naming each array's length unless all have one number of samples."""
    weights = [w for w in as_weight_list(weight) if w is not None]
    if len({len(a) for a in xs + (ys or []) + weights}) <= 1:
        return
    # The names only for the message: train_on_batch runs this every step.
    lengths = {f'x[{i}]': len(a) for i, a in enumerate(xs)}
    lengths.update({f'y[{i}]': len(a) for i, a in enumerate(ys or [])})
    if isinstance(weight, list):
        lengths.update({f'sample_weight[{i}]': len(w)
                        for i, w in enumerate(weight) if w is not None})
    elif weight is not None:
        lengths['sample_weight'] = len(weight)
    raise ValueError(f'the arrays have different numbers of samples: {lengths}')


def check_input_shapes(xs, shapes, names):
    """ValueError if the samples of ``xs`` do not have the model's input ``shapes``
    (``None`` sizes match any), so that data of the wrong size (validation data,
    too) is refused before the first step rather than when its batch comes.

    Nothing is checked for a model whose inputs are not known yet (``shapes``
    empty: a subclassed model, or a Sequential built by its first data).
    """
    for index, (array, shape, name) in enumerate(zip(xs, shapes, names)):
        if not shape_fits(array.shape[1:], shape[1:]):
            raise ValueError(f'x[{index}] is incompatible with input {name!r}: expected '
                             f'shape {(None,) + tuple(shape[1:])}, found {tuple(array.shape)}')


def shape_fits(shape, expected):
    """Whether ``shape`` has the rank of ``expected`` and its sizes (None matches any)."""
    return len(shape) == len(expected) and all(
        size is None or size == found for size, found in zip(expected, shape))


def check_finite(arrays, what):
    """Raise a ValueError naming ``what`` if a floating array holds NaN or infinity."""
    for index, array in enumerate(arrays or []):
        data = to_numpy(array.data) if isinstance(array, Tensor) else np.asarray(array)
        if data.dtype.kind == 'f' and not _all_finite(data):
            position = np.argwhere(~np.isfinite(data))[0]
            raise ValueError(f'{what}[{index}] holds a NaN or infinite value (first at index '
                             f'{tuple(int(i) for i in position)}); clean the data first')


def _all_finite(data):
    """Whether the floating array ``data`` holds no NaN and no infinity.

    Every ``*_on_batch`` call asks. For float32 and float64 a dot product of
    the array with itself answers in one read and no temporary (``isfinite``
    writes a boolean array as large as a quarter of the data, which evicts
    the model's own working set: 10-20 us of a small inference step): a
    square is never negative, so the sum is NaN or infinite exactly when some
    element is, in any summation order, or when a finite sum overflows; only
    then is every element tested.
    """
    if data.dtype in _DOT_DTYPES and data.flags.c_contiguous:
        flat = data.reshape(-1)
        with np.errstate(over='ignore', invalid='ignore'):  # the overflow is only looked at
            total = np.dot(flat, flat)
        if np.isfinite(total):
            return True
    return bool(np.isfinite(data).all())


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def check_batch(batch):
    """The checks of :func:`standardize_arrays` that a batch of a Sequence or a generator
    gets as it comes: no NaN or infinity, weights finite and not negative."""
    check_finite(batch.x, 'x')
    check_finite(batch.y, 'y')
    for weight in as_weight_list(batch.sample_weight):
        if weight is not None:
            check_weights(np.asarray(to_numpy(weight)), 'sample_weight')


def any_temporal(sample_weight_mode):
    """Whether compile's ``sample_weight_mode`` (one mode, a list or a dict) asks for one
    sample weight per time step for some output."""
    mode = sample_weight_mode
    modes = mode.values() if isinstance(mode, dict) else \
        mode if isinstance(mode, (list, tuple)) else [mode]
    return 'temporal' in modes


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
