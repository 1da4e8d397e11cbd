"""conv1d, conv2d and pool2d with Keras's arguments, against PyTorch."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.tensor import Tensor

torch = pytest.importorskip('torch')
rng = np.random.default_rng(5)


def t(array):
    return Tensor(array, dtype=array.dtype)


def test_conv2d_same_channels_last():
    x, kernel = rng.standard_normal((2, 5, 6, 3)), rng.standard_normal((3, 3, 3, 4))
    got = K.eval(K.conv2d(t(x), t(kernel), padding='same'))
    want = torch.nn.functional.conv2d(torch.tensor(x).permute(0, 3, 1, 2),
                                      torch.tensor(kernel).permute(3, 2, 0, 1), padding=1)
    np.testing.assert_allclose(got, want.permute(0, 2, 3, 1).numpy(), rtol=1e-10, atol=1e-12)


def test_conv2d_strided_channels_first():
    x, kernel = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((3, 2, 3, 4))
    got = K.eval(K.conv2d(t(x), t(kernel), strides=(2, 1), data_format='channels_first'))
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(kernel).permute(3, 2, 0, 1),
                                      stride=(2, 1))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)


def test_conv1d_dilated():
    x, kernel = rng.standard_normal((2, 9, 3)), rng.standard_normal((3, 3, 2))
    got = K.eval(K.conv1d(t(x), t(kernel), dilation_rate=2))
    want = torch.nn.functional.conv1d(torch.tensor(x).permute(0, 2, 1),
                                      torch.tensor(kernel).permute(2, 1, 0), dilation=2)
    np.testing.assert_allclose(got, want.permute(0, 2, 1).numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('pool_mode', ['max', 'avg'])
def test_pool2d_default_strides_are_one(pool_mode):
    x = rng.standard_normal((2, 5, 5, 3))
    got = K.eval(K.pool2d(t(x), (2, 2), pool_mode=pool_mode))
    pool = torch.nn.functional.max_pool2d if pool_mode == 'max' else \
        torch.nn.functional.avg_pool2d
    want = pool(torch.tensor(x).permute(0, 3, 1, 2), 2, stride=1)
    np.testing.assert_allclose(got, want.permute(0, 2, 3, 1).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="pool_mode must be 'max' or 'avg'"):
        K.pool2d(t(x), (2, 2), pool_mode='min')
