"""Read pickled *data* without ever running code (for CIFAR-10's python batches).

CIFAR-10's python version stores each batch as a pickled dict of strings,
lists of ints and one numpy array. Python's ``pickle`` would run whatever
callables a file names, so minidl does not use it: this package interprets
the pickle opcodes itself and builds only plain values (None, bools, ints,
floats, str, bytes, tuples, lists, dicts) and numpy arrays of numbers or
strings. The callables that a file may name are replaced by small functions
that turn bytes into arrays (:mod:`.allowed`); any other name
(``os.system``, ``builtins.eval``, ...) and any opcode that would create or
call other objects is refused with :class:`RestrictedPickleError` by the
opcode reader (:mod:`.machine`).

Arrays of Python objects (numpy's dtype ``object``, as ``np.save`` writes
Keras's imdb.npz and reuters.npz, whose samples are lists of word indices)
are read only when the caller asks for them with ``allow_object_arrays``:
their elements are then the plain values this reader built, never raw
memory.

Protocols 0 to 5 are read (CIFAR-10 was written by Python 2; tests write
with Python 3). Strings of Python 2 are returned as bytes, as
``pickle.load(file, encoding='bytes')`` does.
"""

from minidl.datasets.restricted_pickle.allowed import RestrictedPickleError
from minidl.datasets.restricted_pickle.machine import loads

__all__ = ['RestrictedPickleError', 'loads']
