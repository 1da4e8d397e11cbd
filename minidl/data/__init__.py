"""Feeding data to models: ``Sequence`` and the array helpers of the training loop."""

from minidl.data.arrays import batch_indices, split_validation, take
from minidl.data.sequence import Sequence

__all__ = ['Sequence', 'batch_indices', 'split_validation', 'take']
