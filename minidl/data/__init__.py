"""Data for models: ``Sequence``, the array helpers of the training loop, and downloads
(``downloads.get_file``, which the datasets and ``minidl.utils`` use)."""

from minidl.data.arrays import batch_indices, split_validation, take
from minidl.data.sequence import Sequence

__all__ = ['Sequence', 'batch_indices', 'split_validation', 'take']
