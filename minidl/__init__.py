"""minidl: a readable autograd core with Keras 2's API, deterministic by default."""

from minidl import config
from minidl.backend import Device, Generator, get_default_device, set_default_device, set_seed
from minidl.tensor import Function, Tensor, no_grad
from minidl import functions, gradcheck, initializers

__version__ = '0.1.0'

__all__ = [
    'Device', 'Function', 'Generator', 'Tensor', 'config', 'functions', 'get_default_device',
    'gradcheck', 'initializers', 'no_grad', 'set_default_device', 'set_seed',
]
