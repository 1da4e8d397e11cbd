"""GPU devices: clear failures without CuPy or a GPU, moves and scopes with one."""

import contextlib
import importlib.util

import numpy as np
import pytest

import minidl
from minidl.compute import Device, move, scope_of

from tests.minidl.compute.gpu_support import require_gpu

HAS_CUPY = importlib.util.find_spec('cupy') is not None


@pytest.mark.skipif(HAS_CUPY, reason='checks the messages given when CuPy is absent')
@pytest.mark.parametrize('attempt', [
    lambda: minidl.Tensor([1.0]).to('gpu'),
    lambda: minidl.Tensor([1.0], device='gpu:1'),
    lambda: Device('gpu').xp,
    lambda: move(np.zeros(2), 'gpu'),
    lambda: minidl.set_default_device('cuda'),
])
def test_every_gpu_path_without_cupy_says_how_to_install_it(attempt):
    with pytest.raises(RuntimeError, match=r"pip install minidl\[gpu\]"):
        attempt()
    assert minidl.get_default_device() == 'cpu'


def test_cupy_without_a_gpu_says_so():
    cupy = pytest.importorskip('cupy')
    try:
        has_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except cupy.cuda.runtime.CUDARuntimeError:
        has_gpu = False
    if has_gpu:
        pytest.skip('a GPU is present')
    with pytest.raises(RuntimeError, match='no usable NVIDIA GPU'):
        Device('gpu').xp


def test_cpu_moves_and_scopes_do_nothing_to_numpy_arrays():
    array = np.arange(3.0)
    assert move(array, 'cpu') is array
    assert isinstance(scope_of(array), contextlib.nullcontext)


def test_a_missing_gpu_index_is_named():
    cupy = require_gpu()
    count = cupy.cuda.runtime.getDeviceCount()
    with pytest.raises(RuntimeError, match=f"'gpu:{count}' does not exist"):
        Device(f'gpu:{count}').xp


def test_moves_between_host_and_gpu_keep_the_values():
    cupy = require_gpu()
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    on_gpu = move(array, 'gpu')
    assert isinstance(on_gpu, cupy.ndarray) and on_gpu.device.id == 0
    assert move(on_gpu, 'gpu:0') is on_gpu
    np.testing.assert_array_equal(move(on_gpu, 'cpu'), array)


def test_a_second_gpu_gets_its_own_copy():
    cupy = require_gpu()
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip('needs two GPUs')
    on_second = move(np.ones(4), 'gpu:1')
    assert on_second.device.id == 1
    with scope_of(on_second):
        assert cupy.cuda.runtime.getDevice() == 1
    assert move(on_second, 'gpu:0').device.id == 0
