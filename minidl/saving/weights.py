"""Layer and optimizer weights in Keras 2's HDF5 layout, and ``save_weights`` / ``load_weights``.

A group of layers has the attribute 'layer_names' and one sub-group per
layer; each layer group has the attribute 'weight_names' and one dataset per
weight at the path of its name (``dense/kernel:0`` under the group ``dense``).
Every dataset is checked by its declared shape and dtype before any is read
(:mod:`minidl.saving.datasets`), and all are read before any weight
changes, so a bad file leaves the model as it was and never makes loading
allocate more than the model's own weights.
"""

import warnings

from minidl.compute import to_numpy
from minidl.saving import datasets, hdf5, rnn_weights

BACKEND = 'minidl'
# The Keras release whose HDF5 layout these files follow (the last of Keras 2).
KERAS_VERSION = '2.15.0'


def save_weights(model, filepath, overwrite=True):
    """Write the weights of ``model``'s layers to ``filepath`` (HDF5, Keras 2's layout).

    Args:
        model: A built model.
        filepath: Path of the file, replaced atomically.
        overwrite: If False and the file exists, raise FileExistsError.
    """
    values = layer_values(model.layers)
    with hdf5.atomic_writer(filepath, overwrite) as file:
        write_layers(file, values)


def load_weights(model, filepath, by_name=False, skip_mismatch=False):
    """Read weights written by :func:`save_weights` or by Keras 2 into ``model``.

    Also reads the weights of a full-model file (their 'model_weights' group).

    Args:
        model: The model to set the weights of.
        filepath: The HDF5 file.
        by_name: Match layers by name (layers not in the file keep their
            weights) instead of taking the layers with weights in order.
        skip_mismatch: With ``by_name``, warn about and skip layers whose
            weight counts or shapes differ instead of raising.

    Raises:
        ValueError: If the file cannot be read, or its weights do not fit
            the model (naming the layer and the shapes).
    """
    if skip_mismatch and not by_name:
        raise ValueError('skip_mismatch=True needs by_name=True (layers in order are '
                         'either all loaded or none)')
    with hdf5.reader(filepath, 'weights') as file:
        group = file['model_weights'] if 'layer_names' not in file.attrs \
            and 'model_weights' in file else file
        if by_name:
            assignments = assignments_by_name(group, model.layers, skip_mismatch)
        else:
            assignments = assignments_in_order(group, model.layers)
        values = read_values(assignments)
    assign(values)


# ----- writing --------------------------------------------------------------------


def layer_values(layers):
    """``[(layer name, [(weight name, numpy array)])]``, checked to be writable."""
    result = []
    for layer in layers:
        names = [getattr(weight, 'name', None) for weight in layer.weights]
        check_names(names, f'layer {layer.name!r}')
        arrays = [to_numpy(weight.data).copy() for weight in layer.weights]
        result.append((layer.name, list(zip(names, arrays))))
    return result


def check_names(names, owner):
    """Every weight needs a name, unique within its group, to be its dataset's path."""
    if any(not isinstance(name, str) or not name for name in names):
        raise ValueError(f'{owner} has a weight without a name ({names}); weights are '
                         f'saved under their names (make them with add_weight)')
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f'{owner} has several weights named {", ".join(repeated)}; each '
                         f'needs its own name to be saved')


def write_layers(group, values):
    """Write :func:`layer_values`' output into ``group`` with Keras's attributes."""
    hdf5.write_strings(group.attrs, 'layer_names', [name for name, _ in values])
    group.attrs['backend'] = BACKEND.encode('utf8')
    group.attrs['keras_version'] = KERAS_VERSION.encode('utf8')
    for layer_name, weights in values:
        write_arrays(group.create_group(layer_name), weights)


def write_arrays(group, named_arrays):
    """Attribute 'weight_names' and one dataset per ``(name, array)``."""
    hdf5.write_strings(group.attrs, 'weight_names', [name for name, _ in named_arrays])
    for name, array in named_arrays:
        group.create_dataset(name, data=array)


# ----- reading ----------------------------------------------------------------------


def saved_datasets(group):
    """The datasets named by ``group``'s 'weight_names', in that order (none read)."""
    return [datasets.dataset(group, name)
            for name in hdf5.read_strings(group.attrs, 'weight_names')]


def saved_layers(group):
    """``[(layer name, datasets)]`` for every layer the group lists (none read)."""
    layers = []
    for name in hdf5.read_strings(group.attrs, 'layer_names'):
        if name not in group:
            raise KeyError(f'the file lists layer {name!r} but has no group for it')
        layers.append((name, saved_datasets(group[name])))
    return layers


def assignments_in_order(group, layers):
    """Pair the model's layers with weights to the file's, in order, checking everything."""
    saved = [(name, arrays) for name, arrays in saved_layers(group) if arrays]
    targets = [layer for layer in layers if layer.weights]
    if len(saved) != len(targets):
        raise ValueError(
            f'the file has weights for {len(saved)} layer(s) '
            f'({", ".join(name for name, _ in saved)}), the model has {len(targets)} layer(s) '
            f'with weights ({", ".join(layer.name for layer in targets) or "none: is it built?"})'
            f'; load by layer name with by_name=True if the architectures differ')
    assignments = []
    for index, (layer, (saved_name, arrays)) in enumerate(zip(targets, saved)):
        problem = mismatch(layer, arrays)
        if problem:
            raise ValueError(f'layer #{index} {layer.name!r} of the model was matched with '
                             f'layer {saved_name!r} of the file: {problem}')
        assignments.append((layer, arrays))
    return assignments


def assignments_by_name(group, layers, skip_mismatch):
    """Pair layers with the file's layers of the same name, checking everything."""
    by_name = {layer.name: layer for layer in layers}
    assignments = []
    for saved_name, arrays in saved_layers(group):
        layer = by_name.get(saved_name)
        if layer is None:
            continue
        problem = mismatch(layer, arrays)
        if problem and skip_mismatch:
            warnings.warn(f'skipping the weights of layer {layer.name!r}: {problem}',
                          stacklevel=4)
        elif problem:
            raise ValueError(f'layer {layer.name!r}: {problem}; pass skip_mismatch=True to '
                             f'skip such layers')
        else:
            assignments.append((layer, arrays))
    return assignments


def mismatch(layer, items):
    """Why the datasets ``items`` cannot be ``layer``'s weights, or None if they can.

    A recurrent layer's bias may also have its CuDNN counterpart's shape
    (or the other way), which :func:`read_values` converts.
    """
    weights = layer.weights
    if len(items) != len(weights):
        return (f'the layer has {len(weights)} weight(s) '
                f'({", ".join(w.name for w in weights) or "none"}), the file has {len(items)}')
    for weight, item, shapes in zip(weights, items, rnn_weights.allowed_shapes(layer)):
        problems = [datasets.shape_problem(item, shape, weight.name) for shape in shapes]
        if all(problems):
            return problems[0]
    return None


def read_values(assignments):
    """``[(layer, arrays)]``: the checked datasets read, in each weight's dtype, and
    recurrent weights converted to each layer's layout (LSTM <-> CuDNNLSTM, GRU <-> CuDNNGRU).

    Raises:
        ValueError: For recurrent weights that do not convert (a GRU's ``reset_after``).
    """
    return [(layer, rnn_weights.convert(layer, [datasets.read(item, weight.dtype)
                                                for weight, item in zip(layer.weights, items)]))
            for layer, items in assignments]


def assign(values):
    """Set each layer's weights from :func:`read_values`' output (nothing left to fail)."""
    for layer, arrays in values:
        layer.set_weights(arrays)
