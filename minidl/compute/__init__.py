"""Where arrays live and how they are computed: array-module dispatch, devices, random generators.

Everything above this package reaches numpy or CuPy through ``xp`` values
returned here, so the same code runs on both. Only ``compute`` (and its
``cuda`` sub-package) may import CuPy.
"""

from minidl.compute.arrays import get_array_module, is_array, to_numpy
from minidl.compute.device import Device, get_default_device, move, scope_of, set_default_device
from minidl.compute.memory import keep_freed_memory
from minidl.compute.random import Generator, default_generator, new_generator, set_seed
from minidl.compute.segments import segment_sum

keep_freed_memory()

__all__ = [
    'Device', 'Generator', 'default_generator',
    'get_array_module', 'get_default_device', 'is_array', 'move', 'new_generator', 'scope_of',
    'segment_sum', 'set_default_device', 'set_seed', 'to_numpy',
]
