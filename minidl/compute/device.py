"""Devices: where a tensor's array lives ('cpu' or 'gpu')."""

import contextlib

import numpy as np

from minidl.compute.arrays import get_array_module, to_numpy
from minidl.compute.cuda import runtime


class Device:
    """A place for arrays: ``Device('cpu')`` or ``Device('gpu')`` / ``Device('gpu:1')``.

    Args:
        spec: 'cpu', 'gpu', 'gpu:<index>' (``'cuda'`` is accepted for 'gpu'),
            or another Device.
    """

    def __init__(self, spec='cpu'):
        if isinstance(spec, Device):
            spec = str(spec)
        kind, _, index = str(spec).lower().partition(':')
        if kind == 'cuda':
            kind = 'gpu'
        if (kind not in ('cpu', 'gpu') or (index and not index.isdigit())
                or (kind == 'cpu' and index)):
            raise ValueError(f"unknown device {spec!r}: expected 'cpu', 'gpu' or 'gpu:<index>'")
        self.kind = kind
        self.index = int(index) if index else 0

    @property
    def xp(self):
        """The array module for this device: numpy, or cupy for a GPU."""
        if self.kind == 'cpu':
            return np
        return runtime.require_gpu(self.index)

    def __eq__(self, other):
        try:
            other = Device(other)
        except (TypeError, ValueError):
            return NotImplemented
        return (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self):
        return hash((self.kind, self.index))

    def __repr__(self):
        return f"Device('{self}')"

    def __str__(self):
        return 'cpu' if self.kind == 'cpu' else f'gpu:{self.index}'


def device_of(array):
    """The Device holding ``array``."""
    xp = get_array_module(array)
    if xp is np:
        return Device('cpu')
    return Device(f'gpu:{array.device.id}')


def move(array, device):
    """``array`` on ``device`` (a Device or its name); the array itself if already there."""
    device = Device(device)
    if device.kind == 'cpu':
        return to_numpy(array)
    return runtime.to_gpu(array, device.index)


def scope_of(array):
    """A context in which ``array``'s GPU is the current device (does nothing for numpy).

    CuPy runs kernels and allocates on the current device, so work on an
    array of 'gpu:1' must run inside this scope when another GPU is current.
    """
    if isinstance(array, np.ndarray):
        return contextlib.nullcontext()
    return array.device


_default_device = Device('cpu')


def get_default_device():
    """The Device on which new tensors and weights are created."""
    return _default_device


def set_default_device(device):
    """Set the Device on which new tensors and weights are created.

    A GPU also becomes the current CUDA device, on which CuPy allocates.

    Raises:
        RuntimeError: The device cannot be used (no CuPy, no GPU, no such
            index); the message says why, and the default stays as it was.
    """
    global _default_device
    device = Device(device)
    if device.kind == 'gpu':
        runtime.use_gpu(device.index)
    _default_device = device
