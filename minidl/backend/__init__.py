"""Array-module dispatch, devices and random generators.

Everything above this package reaches numpy or CuPy through ``xp`` values
returned here, so the same code runs on both. Only ``backend`` (and its
``cuda`` sub-package) may import CuPy.
"""

from minidl.backend.accelerated import accelerated
from minidl.backend.arrays import get_array_module, is_array, to_numpy
from minidl.backend.device import Device, get_default_device, move, scope_of, set_default_device
from minidl.backend.memory import keep_freed_memory
from minidl.backend.names import clear_session, snake_case, unique_name
from minidl.backend.random import Generator, default_generator, set_seed
from minidl.backend.segments import segment_sum

keep_freed_memory()

__all__ = [
    'Device', 'Generator', 'accelerated', 'clear_session', 'default_generator',
    'get_array_module', 'get_default_device', 'is_array', 'move', 'scope_of', 'segment_sum',
    'set_default_device', 'set_seed', 'snake_case', 'to_numpy', 'unique_name',
]
