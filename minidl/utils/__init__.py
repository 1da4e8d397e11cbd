"""Keras's ``utils``: label encoding, normalisation, padding, seeding, Sequence, plotting.

Keras 2's module paths resolve here too: ``np_utils``, ``data_utils``,
``generic_utils`` (custom objects, ``Progbar``, ``to_list``, ``slice_arrays``) and
``test_utils`` (``layer_test``).
"""

from minidl.layers.symbolic import get_source_inputs
from minidl.utils import generic_utils, np_utils, test_utils
from minidl.utils.data_utils import Sequence, get_file
from minidl.utils.generic_utils import (
    CustomObjectScope, Progbar, custom_object_scope, get_custom_objects, slice_arrays, to_list,
    unpack_singleton)
from minidl.utils.np_utils import normalize, to_categorical
from minidl.utils.model_plot import model_to_dot, plot_model
from minidl.utils.plotting import plot_history
from minidl.utils.seeding import set_random_seed
from minidl.utils.sequences import pad_sequences

__all__ = [
    'CustomObjectScope', 'Progbar', 'Sequence', 'custom_object_scope', 'generic_utils',
    'get_custom_objects', 'get_file', 'get_source_inputs', 'model_to_dot', 'normalize',
    'np_utils', 'pad_sequences', 'plot_history', 'plot_model', 'set_random_seed', 'slice_arrays',
    'test_utils', 'to_categorical', 'to_list', 'unpack_singleton',
]
