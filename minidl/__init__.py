"""minidl: a readable autograd core with Keras 2's API, deterministic by default.

``import minidl as keras`` gives Keras 2's namespace: ``keras.layers``,
``keras.models``, ``keras.backend`` (Keras's ``K`` functions on minidl
tensors), ``keras.preprocessing``, ``keras.utils``, ``keras.Sequential``,
``keras.Model``, ``keras.Input``, ... Beyond Keras: ``Tensor`` and
``no_grad`` for custom training loops, ``set_seed``, devices.
"""

from minidl import config
from minidl.compute import Device, Generator, get_default_device, set_default_device, set_seed
from minidl.tensor import Function, Tensor, no_grad
from minidl import functions, gradcheck, initializers
from minidl import activations, constraints, regularizers
from minidl import data, datasets, layers, losses, metrics, optimizers, callbacks, saving, models
from minidl import backend, engine, preprocessing, utils
from minidl import applications, wrappers
from minidl import mixed_precision
from minidl.naming import clear_session
from minidl.layers import Input
from minidl.models import Model, Sequential

__version__ = '0.1.0'

__all__ = [
    'Device', 'Function', 'Generator', 'Input', 'Model', 'Sequential', 'Tensor', 'activations',
    'applications',
    'backend', 'callbacks', 'clear_session', 'config', 'constraints', 'data', 'datasets',
    'engine', 'functions', 'get_default_device', 'gradcheck', 'initializers', 'layers', 'losses',
    'metrics', 'mixed_precision', 'models', 'no_grad', 'optimizers', 'preprocessing',
    'regularizers', 'saving',
    'set_default_device', 'set_seed', 'utils', 'wrappers',
]
