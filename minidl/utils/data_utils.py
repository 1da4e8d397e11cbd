"""Keras 2's ``keras.utils.data_utils`` names: ``get_file`` and ``Sequence``.

Scripts import them from this path; they live in :mod:`minidl.data.downloads`
and :mod:`minidl.data.sequence`, below the datasets that use them.
"""

from minidl.data import Sequence
from minidl.data.downloads import cache_path, get_file

__all__ = ['Sequence', 'cache_path', 'get_file']
