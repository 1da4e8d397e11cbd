"""Sequence: Keras's batch-indexed data contract."""

import math

import numpy as np
import pytest

from minidl.data import Sequence
from minidl.utils import Sequence as UtilsSequence


class Batches(Sequence):
    def __init__(self, x, batch_size):
        self.x, self.batch_size, self.epochs = x, batch_size, 0

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, index):
        part = self.x[index * self.batch_size:(index + 1) * self.batch_size]
        return part, part * 2

    def on_epoch_end(self):
        self.epochs += 1


def test_iterating_visits_each_batch_once_in_order():
    sequence = Batches(np.arange(5), 2)
    batches = list(sequence)
    assert [x.tolist() for x, _ in batches] == [[0, 1], [2, 3], [4]]
    assert batches[2][1].tolist() == [8]
    sequence.on_epoch_end()
    assert sequence.epochs == 1


def test_base_class_names_the_missing_methods_and_is_keras_utils_sequence():
    assert UtilsSequence is Sequence
    with pytest.raises(NotImplementedError, match='__len__'):
        len(Sequence())
    with pytest.raises(NotImplementedError, match='__getitem__'):
        Sequence()[0]
    assert Sequence().on_epoch_end() is None
