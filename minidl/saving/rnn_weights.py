"""Weights of LSTM / GRU loaded into CuDNNLSTM / CuDNNGRU and back (Keras 2's conversion).

Keras 2's ``preprocess_weights_for_loading`` lets a file written by one of
the pair load into the other, telling the source from the bias's shape
alone (HDF5 weight files do not name layer classes):

- LSTM (4u,) and CuDNNLSTM (8u,): cuDNN's input and recurrent biases add up
  to the plain bias; the other way the plain bias is halved into both;
- GRU(reset_after=True) (2, 3u) and CuDNNGRU (6u,): the same two rows, reshaped;
  a GRU with ``reset_after=False`` (3u,) has no cuDNN equivalent and is refused;
- kernels: each gate block moves between the plain layout and cuDNN's
  reading of it (``minidl/layers/cudnn_recurrent.py`` explains the two).

Recurrent layers are found inside Bidirectional, TimeDistributed and nested
models, and matched to the file's arrays by their weights' positions in the
loaded layer's ``weights``, so any nesting works. Shapes are checked before
anything is read (:func:`allowed_shapes`); the conversion runs on the read
arrays (:func:`convert`).
"""

import numpy as np

from minidl.layers.cudnn_recurrent import CuDNNGRU, CuDNNLSTM
from minidl.layers.recurrent import GRU, LSTM


def _kind(layer):
    """('lstm' or 'gru', target layout name) for a convertible layer, else None."""
    if isinstance(layer, CuDNNLSTM):
        return 'lstm', 'cudnn'
    if isinstance(layer, CuDNNGRU):
        return 'gru', 'cudnn'
    if isinstance(layer, LSTM):
        return 'lstm', 'plain'
    if isinstance(layer, GRU):
        return 'gru', 'plain' if layer.cell.reset_after else 'plain_reset_before'
    return None


def _recurrent_layers(layer):
    """The convertible layers in ``layer`` (itself included) that have a bias."""
    return [inner for inner in layer.flatten_layers()
            if _kind(inner) is not None and len(inner.weights) == 3]


def _bias_shapes(kind, units):
    """The bias shape of each layout of ``kind`` with ``units`` units."""
    if kind == 'lstm':
        return {'plain': (4 * units,), 'cudnn': (8 * units,)}
    return {'plain': (2, 3 * units), 'cudnn': (6 * units,), 'plain_reset_before': (3 * units,)}


def _positions(layer, inner):
    index = {id(weight): i for i, weight in enumerate(layer.weights)}
    return [index[id(weight)] for weight in inner.weights]


def allowed_shapes(layer):
    """For each weight of ``layer``, the shapes a file's dataset may have to load into it.

    The weight's own shape, and, for the bias of an LSTM / GRU / CuDNN layer,
    the bias shapes of the other layouts of its kind (:func:`convert` then
    converts them, or names ``reset_after`` where a GRU's cannot be).
    """
    shapes = [[tuple(weight.shape)] for weight in layer.weights]
    for inner in _recurrent_layers(layer):
        kind, target = _kind(inner)
        bias_position = _positions(layer, inner)[2]
        shapes[bias_position].extend(shape for layout, shape in
                                     _bias_shapes(kind, inner.cell.units).items()
                                     if layout != target)
    return shapes


def _gate_blocks(kernel, gates, transform):
    return np.hstack([transform(block) for block in np.hsplit(kernel, gates)])


def _kernels_from_cudnn(kernel, recurrent, gates):
    units, features = recurrent.shape[0], kernel.shape[0]
    return (_gate_blocks(kernel, gates, lambda block: block.reshape(units, features).T),
            _gate_blocks(recurrent, gates, lambda block: block.T))


def _kernels_to_cudnn(kernel, recurrent, gates):
    units, features = recurrent.shape[0], kernel.shape[0]
    # The inverse of _kernels_from_cudnn: the block W.T back to W flattened as (features, units).
    return (_gate_blocks(kernel, gates, lambda block: block.T.reshape(features, units)),
            _gate_blocks(recurrent, gates, lambda block: block.T))


def _convert_one(inner, arrays):
    """``arrays`` (kernel, recurrent kernel, bias) in ``inner``'s layout, from either layout."""
    kind, target = _kind(inner)
    kernel, recurrent, bias = arrays
    shapes = _bias_shapes(kind, inner.cell.units)
    source = next((layout for layout, shape in shapes.items() if shape == bias.shape), None)
    if source == target:
        return arrays
    if source is None or 'reset_before' in source + target:
        names = {'plain': 'GRU(reset_after=True)', 'cudnn': 'CuDNNGRU',
                 'plain_reset_before': 'GRU(reset_after=False)'}
        raise ValueError(f'layer {inner.name!r}: its bias has shape {shapes[target]} '
                         f'({names[target]}), the file\'s has shape {bias.shape} '
                         f'({names.get(source, "unknown")}); only LSTM <-> CuDNNLSTM and '
                         f'GRU(reset_after=True) <-> CuDNNGRU weights convert, so a GRU needs '
                         f'the reset_after it was saved with')
    gates = 4 if kind == 'lstm' else 3
    if source == 'cudnn':
        kernel, recurrent = _kernels_from_cudnn(kernel, recurrent, gates)
        if kind == 'lstm':
            bias = bias[:4 * inner.cell.units] + bias[4 * inner.cell.units:]
        else:
            bias = bias.reshape(2, -1)
    else:
        kernel, recurrent = _kernels_to_cudnn(kernel, recurrent, gates)
        # Halving is exact in binary floating point, so the halves add up to the bias again.
        bias = np.tile(0.5 * bias, 2) if kind == 'lstm' else bias.reshape(-1)
    return [np.ascontiguousarray(kernel), np.ascontiguousarray(recurrent),
            np.ascontiguousarray(bias, dtype=arrays[2].dtype)]


def convert(layer, arrays):
    """The read ``arrays`` of ``layer``'s weights, each recurrent layer's in its own layout.

    Args:
        layer: The layer (or nested model) being loaded.
        arrays: One numpy array per ``layer.weights``, as read from the file.

    Returns:
        A new list of arrays.

    Raises:
        ValueError: For a GRU with ``reset_after=False`` paired with cuDNN weights.
    """
    arrays = list(arrays)
    for inner in _recurrent_layers(layer):
        positions = _positions(layer, inner)
        converted = _convert_one(inner, [arrays[i] for i in positions])
        for position, array in zip(positions, converted):
            arrays[position] = array
    return arrays
