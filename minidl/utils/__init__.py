"""Keras's ``utils``: label encoding, normalization, seeding and training plots."""

from minidl.backend import set_seed as set_random_seed
from minidl.data import Sequence
from minidl.utils.np_utils import normalize, to_categorical
from minidl.utils.plotting import plot_history

__all__ = ['Sequence', 'normalize', 'plot_history', 'set_random_seed', 'to_categorical']
