"""Accelerated kernels: the cuDNN implementation a Function may use instead of its own.

A Function of ``minidl.functions`` asks for a kernel with the array module of
its inputs and its own parameters, and runs its plain code (numpy or CuPy,
the fallback and the reference in tests) when the answer is None::

    self.kernel = accelerated('conv2d', self.xp, strides=..., pads=..., ...)
    if self.kernel is not None:
        return self.kernel.forward(x, kernel, *bias)

The answer is None on the CPU (without importing anything), when
``config.use_cudnn`` is 'never', when cuDNN cannot be loaded and
``use_cudnn`` is 'auto', and when cuDNN cannot compute this configuration
(asymmetric pooling padding, a GRU with ``reset_after=False``, a batch norm
epsilon below 1e-5). With ``use_cudnn = 'always'`` a cuDNN that cannot be
loaded is an error that says what is missing. A kernel object serves one
Function call: ``forward`` saves what its ``backward`` needs.
"""

import importlib

import numpy as np

from minidl import config
from minidl.compute.cuda.cudnn import api
from minidl.compute.cuda.cudnn.library import CudnnUnavailable

MODES = ('auto', 'always', 'never')

# op name -> (module of minidl.compute.cuda.cudnn, factory, fixed arguments).
# The factory takes the fixed and the Function's keyword arguments and
# returns a kernel, or None for a configuration cuDNN cannot compute.
KERNELS = {
    'conv2d': ('convolution', 'Conv2DKernel', {}),
    'max_pool2d': ('pooling', 'pool_kernel', {'kind': 'max'}),
    'avg_pool2d': ('pooling', 'pool_kernel', {'kind': 'average'}),
    'batch_norm': ('batch_norm', 'batch_norm_kernel', {'kind': 'training'}),
    'batch_norm_inference': ('batch_norm', 'batch_norm_kernel', {'kind': 'inference'}),
    'lstm': ('rnn', 'rnn_kernel', {'cell': 'lstm'}),
    'gru': ('rnn', 'rnn_kernel', {'cell': 'gru'}),
}


def cudnn_mode():
    """``config.use_cudnn``, checked.

    Raises:
        ValueError: It is not 'auto', 'always' or 'never'.
    """
    mode = config.use_cudnn
    if mode not in MODES:
        raise ValueError(f"minidl.config.use_cudnn must be 'auto', 'always' or 'never', "
                         f'got {mode!r}')
    return mode


def accelerated(op_name, xp, **params):
    """The accelerated kernel for ``op_name`` on arrays of module ``xp``, or None.

    Args:
        op_name: One of ``KERNELS``: 'conv2d', 'max_pool2d', 'avg_pool2d',
            'batch_norm', 'batch_norm_inference', 'lstm', 'gru'.
        xp: The array module of the Function's inputs.
        **params: The Function's parameters, named as the factory names them.

    Raises:
        ValueError: Unknown ``op_name`` or invalid ``config.use_cudnn``.
        RuntimeError: ``config.use_cudnn`` is 'always' and cuDNN cannot be
            loaded; the message says what is missing and how to install it.
    """
    if op_name not in KERNELS:
        raise ValueError(f'no accelerated kernel is named {op_name!r}; '
                         f'known: {", ".join(KERNELS)}')
    mode = cudnn_mode()
    if xp is np or mode == 'never':
        return None
    try:
        api.functions()
    except CudnnUnavailable as error:
        if mode == 'always':
            raise RuntimeError(f"minidl.config.use_cudnn is 'always' but {error}") from error
        return None
    module_name, factory, fixed = KERNELS[op_name]
    module = importlib.import_module(f'minidl.compute.cuda.cudnn.{module_name}')
    return getattr(module, factory)(**fixed, **params)
