"""Keras's ``utils``: label encoding, normalisation, padding, seeding, Sequence, plotting."""

from minidl.data import Sequence
from minidl.utils.arrays import normalize, to_categorical
from minidl.utils.data_utils import get_file
from minidl.utils.plotting import plot_history
from minidl.utils.seeding import set_random_seed
from minidl.utils.sequences import pad_sequences

__all__ = ['Sequence', 'get_file', 'normalize', 'pad_sequences', 'plot_history', 'set_random_seed',
           'to_categorical']
