"""Feeding data to models: ``Sequence`` and the batching helpers of the training loop."""

from minidl.data.batching import batch_indices, split_validation
from minidl.data.sequence import Sequence

__all__ = ['Sequence', 'batch_indices', 'split_validation']
