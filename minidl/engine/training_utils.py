"""``keras.engine.training_utils``: the helpers of Keras 2.2.4 that user code imports.

Plain functions of names and arrays, with Keras 2.2.4's arguments and
results: ``standardize_input_data`` (data as a list of arrays, in the
order of ``names``), ``standardize_sample_weights`` / ``standardize_class_weights``,
``check_array_length_consistency``, ``check_loss_and_target_compatibility``,
``collect_metrics``, ``make_batches``, ``batch_shuffle``,
``check_num_samples``, ``is_sequence`` and ``iter_sequence_infinite``.

They serve scripts and libraries that call them directly, so they keep
Keras 2.2.4's rules and errors, which differ from ``fit``'s own intake
(:mod:`minidl.models.intake`) on purpose: a vector becomes a column, a dict
must name every input, one weight stands for a single output. What the two
agree on comes from the intake: what a Sequence is (its one dispatch on the
kind of data, :func:`~minidl.models.intake.kind_of`) and when an array's
shape matches an expected one (:func:`~minidl.models.intake.shape_fits`).
"""

import copy

import numpy as np

from minidl import losses
from minidl.compute.random import default_generator
from minidl.layers.symbolic import SymbolicTensor
from minidl.models import intake
from minidl.tensor import Tensor

__all__ = [
    'batch_shuffle', 'check_array_length_consistency', 'check_loss_and_target_compatibility',
    'check_num_samples', 'collect_metrics', 'is_sequence', 'iter_sequence_infinite',
    'make_batches', 'standardize_class_weights', 'standardize_input_data',
    'standardize_sample_or_class_weights', 'standardize_sample_weights',
    'standardize_single_array',
]


def is_tensor(x):
    # K.is_tensor, which sits on this module's floor (engine may not import backend).
    return isinstance(x, (Tensor, SymbolicTensor))


def _values(x):
    """A pandas DataFrame's array, anything else as it is (Keras 2 accepts DataFrames)."""
    return x.values if type(x).__name__ == 'DataFrame' else x


def standardize_single_array(x):
    """One array as a model takes it: a vector becomes a column (n,) -> (n, 1).

    Raises:
        ValueError: For a tensor without a fixed batch size.
    """
    if x is None:
        return None
    if is_tensor(x):
        shape = tuple(x.shape)
        if shape is None or shape[0] is None:
            raise ValueError(f'symbolic tensors fed to a model need a fixed batch size; '
                             f'got a tensor of shape {shape}')
        return x
    if x.ndim == 1:
        return np.expand_dims(x, 1)
    return x


def standardize_input_data(data, names, shapes=None, check_batch_axis=True,
                           exception_prefix=''):
    """User data (an array, a list or a dict of arrays) as a list of arrays in ``names``' order.

    Args:
        data: An array, a list of arrays, a dict from names to arrays, or None.
        names: The model's input (or output) names.
        shapes: Optional expected shapes, one per name (None entries and
            None dimensions are not checked).
        check_batch_axis: Whether the first dimension is checked too.
        exception_prefix: Word naming the data in errors ('input', 'target').

    Returns:
        A list with one array (or None) per name.

    Raises:
        ValueError: For missing names, a wrong number of arrays, or shapes
            that differ from ``shapes``.
        TypeError: When ``data`` holds no arrays.
    """
    if not names:
        if data is not None and hasattr(data, '__len__') and len(data):
            raise ValueError(f'error when checking model {exception_prefix}: expected no data, '
                             f'but got {data!r}'[:300])
        return []
    if data is None:
        return [None] * len(names)
    if isinstance(data, dict):
        missing = [name for name in names if name not in data]
        if missing:
            raise ValueError(f'no data provided for {missing[0]!r}; data is needed for each '
                             f'key in {list(names)}')
        data = [_values(data[name]) for name in names]
    elif isinstance(data, list):
        if data and isinstance(data[0], list):
            data = [np.asarray(item) for item in data]
        elif len(names) == 1 and data and isinstance(data[0], (float, int)):
            data = [np.asarray(data)]
        else:
            data = [_values(item) for item in data]
    else:
        data = [_values(data)]
    data = [standardize_single_array(x) for x in data]

    if len(data) != len(names):
        if data and hasattr(data[0], 'shape'):
            raise ValueError(f'error when checking model {exception_prefix}: the model expects '
                             f'{len(names)} array(s), but got a list of {len(data)}')
        if len(names) > 1:
            raise ValueError(f'error when checking model {exception_prefix}: the model expects '
                             f'a list of {len(names)} arrays, got {str(data)[:200]}')
        if len(data) == 1 and not hasattr(data[0], 'shape'):
            raise TypeError(f'error when checking model {exception_prefix}: data should be a '
                            f'numpy array, or a list or dict of them; found {str(data)[:200]}')
        data = [np.asarray(data)]

    for name, x, shape in zip(names, data, shapes or [None] * len(names)):
        if shape is None or is_tensor(x) or x is None:
            continue
        if x.ndim != len(shape):
            raise ValueError(f'error when checking {exception_prefix}: expected {name} to have '
                             f'{len(shape)} dimensions, but got an array of shape {x.shape}')
        got, want = (x.shape, shape) if check_batch_axis else (x.shape[1:], shape[1:])
        if not intake.shape_fits(got, want):
            raise ValueError(f'error when checking {exception_prefix}: expected {name} to have '
                             f'shape {tuple(want)} but got an array of shape {tuple(got)}')
    return data


def standardize_sample_or_class_weights(x_weight, output_names, weight_type):
    """``sample_weight`` or ``class_weight`` as a list with one entry per output.

    Args:
        x_weight: None, one weight (for one output), a list in the outputs'
            order, or a dict from output names.
        output_names: The model's output names.
        weight_type: 'sample_weight' or 'class_weight', for errors.

    Raises:
        ValueError: For a list of the wrong length.
        TypeError: For one weight given to a model of several outputs.
    """
    if x_weight is None or (hasattr(x_weight, '__len__') and len(x_weight) == 0):
        return [None] * len(output_names)
    if len(output_names) == 1:
        if isinstance(x_weight, list) and len(x_weight) == 1:
            return x_weight
        if isinstance(x_weight, dict) and output_names[0] in x_weight:
            return [x_weight[output_names[0]]]
        return [x_weight]
    if isinstance(x_weight, list):
        if len(x_weight) != len(output_names):
            raise ValueError(f'`{weight_type}` is a list of {len(x_weight)} elements, but the '
                             f'model has {len(output_names)} outputs: give one per output')
        return x_weight
    if isinstance(x_weight, dict):
        return [x_weight.get(name) for name in output_names]
    raise TypeError(f'the model has {len(output_names)} outputs, so `{weight_type}` must be a '
                    f'list or a dict, got {type(x_weight).__name__}')


def standardize_class_weights(class_weight, output_names):
    """:func:`standardize_sample_or_class_weights` for ``class_weight``."""
    return standardize_sample_or_class_weights(class_weight, output_names, 'class_weight')


def standardize_sample_weights(sample_weight, output_names):
    """:func:`standardize_sample_or_class_weights` for ``sample_weight``."""
    return standardize_sample_or_class_weights(sample_weight, output_names, 'sample_weight')


def _lengths(arrays):
    # Keras 2 counts None (no arrays, or a None entry) as length 0.
    if arrays is None:
        return {0}
    return {0 if x is None else int(x.shape[0]) for x in arrays}


def check_array_length_consistency(inputs, targets, weights=None):
    """Check that inputs, targets and sample weights all have the same number of samples.

    Args:
        inputs: List of input arrays.
        targets: List of target arrays.
        weights: Optional list of sample weight arrays.

    Raises:
        ValueError: Naming the arrays whose first dimensions differ.
    """
    set_x, set_y, set_w = _lengths(inputs), _lengths(targets), _lengths(weights)
    if len(set_x) > 1:
        raise ValueError(f'all input arrays (x) should have the same number of samples; got '
                         f'shapes {[x.shape for x in inputs]}')
    if len(set_y) > 1:
        raise ValueError(f'all target arrays (y) should have the same number of samples; got '
                         f'shapes {[y.shape for y in targets]}')
    if set_x != set_y:
        raise ValueError(f'input arrays should have the same number of samples as target '
                         f'arrays; found {min(set_x)} input samples and {min(set_y)} target '
                         f'samples')
    if weights is None:
        return  # Keras 2.2.4 would compare the targets with 0 samples of weights here
    if len(set_w) > 1:
        raise ValueError(f'all sample_weight arrays should have the same number of samples; '
                         f'got shapes {[w.shape for w in weights]}')
    if set_y != set_w:
        raise ValueError(f'sample_weight arrays should have the same number of samples as '
                         f'target arrays; got {min(set_y)} target samples and {min(set_w)} '
                         f'sample weights')


def check_loss_and_target_compatibility(targets, loss_fns, output_shapes):
    """Refuse targets that a loss cannot take (Keras 2.2.4's checks).

    Integer labels (a last dimension of 1) with ``categorical_crossentropy``,
    and, for mean squared error and the binary and categorical
    cross-entropies, targets whose shape differs from the output's.

    Args:
        targets: List of target arrays (None entries are skipped).
        loss_fns: List of loss functions, one per target.
        output_shapes: List of the outputs' shapes.

    Raises:
        ValueError: Naming the target shape and the loss.
    """
    same_shape = {losses.mean_squared_error, losses.binary_crossentropy,
                  losses.categorical_crossentropy}
    for y, loss, shape in zip(targets, loss_fns, output_shapes):
        if y is None or loss is None:
            continue
        if loss is losses.categorical_crossentropy and y.shape[-1] == 1:
            raise ValueError(f'a target array of shape {y.shape} was given to the loss '
                             f'categorical_crossentropy, which expects one-hot targets of shape '
                             f'(samples, classes): convert integer labels with '
                             f'to_categorical, or use sparse_categorical_crossentropy')
        if loss in same_shape:
            for target_dim, out_dim in zip(y.shape[1:], shape[1:]):
                if out_dim is not None and target_dim != out_dim:
                    raise ValueError(f'a target array of shape {y.shape} was given for an '
                                     f'output of shape {shape} with the loss {loss.__name__}, '
                                     f'which needs targets of the output\'s shape')


def collect_metrics(metrics, output_names):
    """The metrics of each output: a list (the same for all) or a dict by output name.

    Returns:
        A list, one per output, of lists of metrics.

    Raises:
        TypeError: For ``metrics`` other than a list or a dict.
    """
    if not metrics:
        return [[] for _ in output_names]
    if isinstance(metrics, list):
        return [copy.copy(metrics) for _ in output_names]
    if isinstance(metrics, dict):
        return [list(m) if isinstance(m, list) else [m]
                for m in (metrics.get(name, []) for name in output_names)]
    raise TypeError(f'metrics must be a list or a dict, got {metrics!r}')


def batch_shuffle(index_array, batch_size):
    """Shuffle whole batches of ``index_array`` (for HDF5 data read in contiguous blocks).

    The full batches change places; the last, partial batch stays last. The
    order comes from minidl's default generator, never numpy's global state,
    so ``minidl.set_seed`` repeats it (Keras 2 draws with ``np.random``).

    Args:
        index_array: 1-D array of indices.
        batch_size: Size of the batches that keep their order within.

    Returns:
        The shuffled indices, a new array.
    """
    index_array = np.asarray(index_array)
    count = len(index_array) // batch_size
    last = index_array[count * batch_size:]
    blocks = index_array[:count * batch_size].reshape((count, batch_size))
    blocks = blocks[default_generator().permutation(count)]
    return np.append(blocks.flatten(), last)


def make_batches(size, batch_size):
    """``[(start, stop)]`` of the batches of ``size`` samples, the last possibly shorter."""
    count = (size + batch_size - 1) // batch_size
    return [(i * batch_size, min(size, (i + 1) * batch_size)) for i in range(count)]


def check_num_samples(ins, batch_size=None, steps=None, steps_name='steps'):
    """The number of samples in ``ins``, or None when the data is counted in ``steps``.

    Args:
        ins: List of arrays (or tensors) fed to a model.
        batch_size: The batch size, or None.
        steps: The number of batches, or None.
        steps_name: The name of ``steps`` in the caller's API, for errors.

    Raises:
        ValueError: For both ``steps`` and ``batch_size``, or for tensors
            without ``steps``.
    """
    if steps is not None and batch_size is not None:
        raise ValueError(f'if {steps_name} is set, batch_size must be None')
    if not ins or any(is_tensor(x) for x in ins):
        if steps is None:
            raise ValueError(f'data given as symbolic tensors needs the `{steps_name}` '
                             f'argument (instead of batch_size)')
        return None
    if hasattr(ins[0], 'shape'):
        return int(ins[0].shape[0])
    return None


def is_sequence(seq):
    """Whether ``seq`` is a :class:`~minidl.utils.Sequence` (Keras 2's test, by class)."""
    return intake.kind_of(seq) == intake.SEQUENCE or getattr(seq, 'use_sequence_api', False)


def iter_sequence_infinite(seq):
    """The batches of a Sequence, over and over."""
    while True:
        yield from seq
