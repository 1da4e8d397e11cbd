"""Devices: where a tensor's array lives ('cpu' or 'gpu')."""

import numpy as np

from minidl.backend.arrays import get_array_module


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
        if kind not in ('cpu', 'gpu') or (index and not index.isdigit()) or (kind == 'cpu' and index):
            raise ValueError(f"unknown device {spec!r}: expected 'cpu', 'gpu' or 'gpu:<index>'")
        self.kind = kind
        self.index = int(index) if index else 0

    @property
    def xp(self):
        """The array module for this device: numpy, or cupy for a GPU."""
        if self.kind == 'cpu':
            return np
        return _import_cupy()

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


def _import_cupy():
    try:
        import cupy
    except ImportError as error:
        raise RuntimeError(
            "the 'gpu' device needs CuPy: install minidl with the 'gpu' extra "
            "(pip install minidl[gpu]) on a machine with an NVIDIA GPU") from error
    return cupy


def device_of(array):
    """The Device holding ``array``."""
    xp = get_array_module(array)
    if xp is np:
        return Device('cpu')
    return Device(f'gpu:{array.device.id}')


_default_device = Device('cpu')


def get_default_device():
    """The Device on which new tensors and weights are created."""
    return _default_device


def set_default_device(device):
    """Set the Device on which new tensors and weights are created."""
    global _default_device
    device = Device(device)
    device.xp  # fail now, with a clear message, if the device cannot be used
    _default_device = device
