"""The accelerated-kernel lookup: config validation and the CPU and no-cuDNN answers."""

import types

import numpy as np
import pytest

from minidl import config
from minidl.compute import accelerated
from minidl.compute.accelerated import KERNELS

from tests.minidl.compute.gpu_support import cudnn_loads


def other_array_module():
    """An array module that is not numpy: CuPy where installed, else a stand-in.

    The stand-in is never used as an array module: the lookup only checks
    that it is not numpy before it loads cuDNN, which is what is tested.
    """
    try:
        import cupy
        return cupy
    except ImportError:
        return types.ModuleType('not_numpy')


@pytest.mark.parametrize('op_name', sorted(KERNELS))
def test_numpy_gets_no_kernel_in_every_mode(op_name, monkeypatch):
    for mode in ('auto', 'always', 'never'):
        monkeypatch.setattr(config, 'use_cudnn', mode)
        assert accelerated(op_name, np) is None


def test_invalid_use_cudnn_is_rejected_with_the_choices(monkeypatch):
    monkeypatch.setattr(config, 'use_cudnn', 'yes')
    with pytest.raises(ValueError, match="'auto', 'always' or 'never', got 'yes'"):
        accelerated('conv2d', np)


def test_unknown_kernel_name_lists_the_known_ones():
    with pytest.raises(ValueError, match='known: conv2d'):
        accelerated('conv3d', np)


def test_never_gives_no_kernel_without_loading_cudnn(monkeypatch):
    monkeypatch.setattr(config, 'use_cudnn', 'never')
    assert accelerated('conv2d', other_array_module(), strides=(1, 1), pads=((0, 0), (0, 0)),
                       dilations=(1, 1), channels_first=False) is None


@pytest.mark.skipif(cudnn_loads(), reason='cuDNN loads here: tests its absence')
def test_missing_cudnn_falls_back_under_auto(monkeypatch):
    monkeypatch.setattr(config, 'use_cudnn', 'auto')
    assert accelerated('lstm', other_array_module(), reverse=False, has_bias=True,
                       has_state=False, training=True) is None


@pytest.mark.skipif(cudnn_loads(), reason='cuDNN loads here: tests its absence')
def test_missing_cudnn_is_an_error_under_always_that_names_the_fix(monkeypatch):
    monkeypatch.setattr(config, 'use_cudnn', 'always')
    with pytest.raises(RuntimeError, match="use_cudnn is 'always'") as raised:
        accelerated('conv2d', other_array_module())
    assert 'libcudnn.so.9' in str(raised.value)
    assert 'nvidia-cudnn-cu13' in str(raised.value)
