"""The vendor seam (minidl.compute.vendor): which library's kernels a Function gets.

oneDNN serves float32 numpy arrays and cuDNN CuPy arrays, under
``config.use_onednn`` / ``config.use_cudnn`` ('auto' | 'always' | 'never').
oneDNN is made unloadable here by pointing ``MINIDL_ONEDNN_LIB_DIR`` at an
empty directory; everything is restored after, and checked to be, so that
later tests still run oneDNN.
"""

import contextlib
import inspect
import types

import numpy as np
import pytest

from minidl import config
from minidl.compute import vendor
from minidl.compute.onednn import api as onednn_api
from minidl.compute.onednn import library as onednn_library
from minidl.compute.onednn.convolution import Conv2DKernel
from minidl.functions.conv import Conv2D, conv2d
from tests.minidl.compute.gpu_support import cudnn_loads
from tests.minidl.compute.onednn_support import vendor_kernels_seen

CONV_PARAMS = dict(strides=(1, 1), pads=((0, 0), (0, 0)), dilations=(1, 1),
                   channels_first=False)


def other_array_module():
    """An array module that is not numpy: CuPy where installed, else a stand-in.

    The stand-in is never used as an array module: the seam only checks that
    it is not numpy before it turns to cuDNN, which is what is tested.
    """
    try:
        import cupy
        return cupy
    except ImportError:
        return types.ModuleType('not_numpy')


def onednn_loads():
    try:
        onednn_api.functions()
    except onednn_library.OnednnUnavailable:
        return False
    return True


requires_onednn = pytest.mark.skipif(not onednn_loads(),
                                     reason='oneDNN (onednn-cpu-gomp) does not load here')
requires_no_cudnn = pytest.mark.skipif(cudnn_loads(), reason='cuDNN loads here: tests its absence')


@pytest.fixture(autouse=True)
def _fresh_seam():
    """Each test sees the seam as a new process would, and leaves nothing cached behind."""
    vendor.forget()
    yield
    vendor.forget()


@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if the seam tries to load any library."""
    def refuse(switch):
        raise AssertionError(f'the seam tried to load the library of {switch}')
    monkeypatch.setattr(vendor, '_load', refuse)


@contextlib.contextmanager
def onednn_unloadable(directory):
    """oneDNN looked for in the empty ``directory``: as if the wheel were not installed.

    The bound functions are cached in ``api`` as well as the library in
    ``library.library``'s lru_cache: both are set aside, and restored after.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(onednn_library.ENVIRONMENT_VARIABLE, str(directory))
        patch.setattr(onednn_api, '_functions', None)
        onednn_library.library.cache_clear()
        vendor.forget()
        try:
            yield
        finally:
            onednn_library.library.cache_clear()
            vendor.forget()


def _direct_conv2d(x, kernel):
    """A 'valid', stride-1 NHWC convolution by explicit loops in float64: the truth."""
    n, h, w, _ = x.shape
    kh, kw, _, out = kernel.shape
    y = np.zeros((n, h - kh + 1, w - kw + 1, out))
    for i in range(y.shape[1]):
        for j in range(y.shape[2]):
            window = x[:, i:i + kh, j:j + kw, :].astype(np.float64)
            y[:, i, j] = np.tensordot(window, kernel.astype(np.float64),
                                      axes=([1, 2, 3], [0, 1, 2]))
    return y


def _factories(module):
    return {name for name, value in vars(module).items()
            if callable(value) and not name.startswith('_') and not isinstance(value, type)}


# --- the switches -------------------------------------------------------------------------------

@pytest.mark.parametrize('switch,xp', [('use_onednn', np), ('use_cudnn', other_array_module())],
                         ids=['use_onednn', 'use_cudnn'])
@pytest.mark.parametrize('value', ['yes', 'Auto', True, None])
def test_invalid_switch_values_are_rejected_with_the_choices(switch, xp, value, monkeypatch,
                                                              no_loading):
    monkeypatch.setattr(config, switch, value)
    with pytest.raises(ValueError, match=f"minidl.config.{switch} must be 'auto', 'always' or "
                                         f"'never', got {value!r}"):
        vendor.kernels(xp)
    with pytest.raises(ValueError, match=switch):
        vendor.kernel(xp, 'conv2d', np.float32, **CONV_PARAMS)


def test_each_module_reads_only_its_own_switch(monkeypatch):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    monkeypatch.setattr(config, 'use_cudnn', 'bogus')
    assert vendor.kernels(np) is None  # numpy never looks at use_cudnn
    monkeypatch.setattr(config, 'use_cudnn', 'never')
    monkeypatch.setattr(config, 'use_onednn', 'bogus')
    assert vendor.kernels(other_array_module()) is None


@pytest.mark.parametrize('xp', [np, other_array_module()], ids=['numpy', 'not-numpy'])
def test_never_gives_none_without_loading_anything(xp, monkeypatch, no_loading):
    monkeypatch.setattr(config, 'use_onednn', 'never')
    monkeypatch.setattr(config, 'use_cudnn', 'never')
    assert vendor.kernels(xp) is None
    assert vendor.kernel(xp, 'conv2d', np.float32, **CONV_PARAMS) is None
    assert vendor._loaded == {}


# --- cuDNN absent (non-numpy arrays) ------------------------------------------------------------

@requires_no_cudnn
def test_missing_cudnn_falls_back_under_auto(monkeypatch):
    monkeypatch.setattr(config, 'use_cudnn', 'auto')
    assert vendor.kernels(other_array_module()) is None
    assert vendor.kernel(other_array_module(), 'conv2d', np.float32, **CONV_PARAMS) is None
    assert vendor.kernels(other_array_module()) is None  # the failure is remembered, not raised


@requires_no_cudnn
def test_missing_cudnn_under_always_is_an_error_that_names_the_fix(monkeypatch):
    monkeypatch.setattr(config, 'use_cudnn', 'always')
    with pytest.raises(RuntimeError, match="minidl.config.use_cudnn is 'always'") as raised:
        vendor.kernels(other_array_module())
    assert 'libcudnn.so.9' in str(raised.value)
    assert 'nvidia-cudnn-cu13' in str(raised.value)
    with pytest.raises(RuntimeError, match='libcudnn.so.9'):
        vendor.kernel(other_array_module(), 'conv2d', np.float32, **CONV_PARAMS)


# --- oneDNN present (numpy arrays) --------------------------------------------------------------

@requires_onednn
@pytest.mark.parametrize('mode', ['auto', 'always'])
def test_numpy_gets_the_onednn_kernels_when_it_loads(mode, monkeypatch):
    from minidl.compute.onednn import kernels as onednn_kernels
    monkeypatch.setattr(config, 'use_onednn', mode)
    assert vendor.kernels(np) is onednn_kernels
    assert isinstance(vendor.kernel(np, 'conv2d', np.float32, **CONV_PARAMS), Conv2DKernel)
    # The factories have the names of cuDNN's table, so a Function asks both alike.
    from minidl.compute.cuda.cudnn import kernels as cudnn_kernels
    assert _factories(onednn_kernels) == _factories(cudnn_kernels) >= {'conv2d'}


@requires_onednn
@pytest.mark.parametrize('mode', ['auto', 'always'])
def test_float64_keeps_the_reference_code(mode, monkeypatch):
    monkeypatch.setattr(config, 'use_onednn', mode)
    assert vendor.kernel(np, 'conv2d', np.float64, **CONV_PARAMS) is None
    seen = vendor_kernels_seen(monkeypatch, Conv2D)
    rng = np.random.default_rng(0)
    x, kernel = rng.standard_normal((2, 5, 4, 3)), rng.standard_normal((2, 3, 3, 2))
    y = conv2d(x, kernel).numpy()
    assert seen == [None] and y.dtype == np.float64
    np.testing.assert_allclose(y, _direct_conv2d(x, kernel), rtol=1e-12, atol=1e-12)


# --- oneDNN absent ------------------------------------------------------------------------------

def test_missing_onednn_falls_back_under_auto(tmp_path, monkeypatch):
    monkeypatch.setattr(config, 'use_onednn', 'auto')
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    kernel = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    seen = vendor_kernels_seen(monkeypatch, Conv2D)
    with onednn_unloadable(tmp_path):
        assert vendor.kernels(np) is None
        assert vendor.kernel(np, 'conv2d', np.float32, **CONV_PARAMS) is None
        y = conv2d(x, kernel).numpy()
    assert seen == [None]  # the reference code ran
    truth = _direct_conv2d(x, kernel)
    # float32 sums of 18 products of unit normals: 1e-5 of the largest value is ~100 roundings.
    np.testing.assert_allclose(y, truth, rtol=0, atol=1e-5 * np.abs(truth).max())
    if onednn_loads():  # restored: later tests still get oneDNN
        assert vendor.kernels(np) is not None
        conv2d(x, kernel)
        assert isinstance(seen[-1], Conv2DKernel)


def test_missing_onednn_under_always_is_an_error_that_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(config, 'use_onednn', 'always')
    x = np.ones((1, 4, 4, 2), np.float32)
    kernel = np.ones((3, 3, 2, 1), np.float32)
    with onednn_unloadable(tmp_path):
        with pytest.raises(RuntimeError, match="minidl.config.use_onednn is 'always'") as raised:
            vendor.kernels(np)
        message = str(raised.value)
        assert 'libdnnl.so.3' in message and 'onednn-cpu-gomp' in message
        assert str(tmp_path) in message  # where it looked
        with pytest.raises(RuntimeError, match='libdnnl.so.3'):
            conv2d(x, kernel)  # a Function gets the error too, not a silent fallback
        # float64 never asks for oneDNN's kernels, but the switch still checks the library.
        with pytest.raises(RuntimeError, match='onednn-cpu-gomp'):
            vendor.kernel(np, 'conv2d', np.float64, **CONV_PARAMS)
    if onednn_loads():
        assert isinstance(vendor.kernel(np, 'conv2d', np.float32, **CONV_PARAMS), Conv2DKernel)


# --- one signature per factory ------------------------------------------------------------------

def test_both_libraries_offer_the_same_factories_with_the_same_parameters():
    """A Function asks either library with the same call: any factory that differs in name
    or parameters would fail only on the machine that has that library."""
    from minidl.compute.cuda.cudnn import kernels as cudnn_kernels
    from minidl.compute.onednn import kernels as onednn_kernels
    names = _factories(onednn_kernels)
    assert names == _factories(cudnn_kernels) >= {'conv2d', 'pool2d', 'batch_norm', 'rnn'}
    for name in sorted(names):
        ours, theirs = (inspect.signature(getattr(module, name))
                        for module in (onednn_kernels, cudnn_kernels))
        assert list(ours.parameters) == list(theirs.parameters), name
