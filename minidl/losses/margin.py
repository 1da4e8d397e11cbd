"""Margin losses for classifiers whose outputs are scores: hinge, squared and categorical."""

import minidl.functions as F
from minidl.layers.operation import recordable
from minidl.losses.inputs import prepare


def _signed(y_true):
    """Keras's hinge labels: all-{0, 1} targets become {-1, 1}; others stay as they are."""
    # Decided on the device, without reading the labels back to the host.
    binary = y_true.xp.all((y_true.data == 0) | (y_true.data == 1))
    return F.where(binary, 2.0 * y_true - 1.0, y_true)


@recordable
def hinge(y_true, y_pred):
    """``mean(max(1 - y_true * y_pred, 0))`` over the last axis; labels in {-1, 1} or {0, 1}."""
    y_true, y_pred = prepare('hinge', y_true, y_pred)
    return F.mean(F.relu(1.0 - _signed(y_true) * y_pred), axis=-1)


@recordable
def squared_hinge(y_true, y_pred):
    """``mean(max(1 - y_true * y_pred, 0) ** 2)`` over the last axis."""
    y_true, y_pred = prepare('squared_hinge', y_true, y_pred)
    margin = F.relu(1.0 - _signed(y_true) * y_pred)
    return F.mean(margin * margin, axis=-1)


@recordable
def categorical_hinge(y_true, y_pred):
    """``max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)`` over the last axis."""
    y_true, y_pred = prepare('categorical_hinge', y_true, y_pred)
    positive = F.sum(y_true * y_pred, axis=-1)
    negative = F.max((1.0 - y_true) * y_pred, axis=-1)
    return F.relu(negative - positive + 1.0)
