"""minidl: a readable autograd core with Keras 2's API, deterministic by default."""

from minidl import config
from minidl.compute import Device, Generator, get_default_device, set_default_device, set_seed
from minidl.tensor import Function, Tensor, no_grad
from minidl import functions, gradcheck, initializers
from minidl import activations, constraints, regularizers
from minidl import data, layers, losses, metrics, optimizers, callbacks, saving, models
from minidl.compute import clear_session

__version__ = '0.1.0'

__all__ = [
    'Device', 'Function', 'Generator', 'Tensor', 'activations', 'callbacks', 'clear_session',
    'config', 'constraints', 'data', 'functions', 'get_default_device', 'gradcheck',
    'initializers', 'layers', 'losses', 'metrics', 'models', 'no_grad', 'optimizers',
    'regularizers', 'saving', 'set_default_device', 'set_seed',
]
