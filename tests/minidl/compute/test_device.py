"""Devices and the array-module switch on a machine without (or with) a GPU."""

import importlib.util

import numpy as np
import pytest

import minidl
from minidl.compute import Device, get_array_module, to_numpy

HAS_CUPY = importlib.util.find_spec('cupy') is not None


def test_device_names():
    assert Device('cpu') == 'cpu'
    assert str(Device('gpu')) == 'gpu:0' and Device('cuda:1') == Device('gpu:1')
    for bad in ('tpu', 'gpu:x', 'cpu:1'):
        with pytest.raises(ValueError, match='unknown device'):
            Device(bad)


def test_numpy_arrays_use_numpy():
    assert get_array_module(np.zeros(2)) is np
    assert Device('cpu').xp is np
    assert isinstance(to_numpy(np.zeros(2)), np.ndarray)


@pytest.mark.skipif(HAS_CUPY, reason='checks the message given when CuPy is absent')
def test_gpu_without_cupy_fails_clearly_and_keeps_the_default():
    with pytest.raises(RuntimeError, match="'gpu' extra"):
        minidl.set_default_device('gpu')
    assert minidl.get_default_device() == 'cpu'


def test_tensor_to_the_same_device_is_a_no_op():
    x = minidl.Tensor([1.0])
    assert x.to('cpu') is x
