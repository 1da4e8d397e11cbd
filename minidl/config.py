"""Global switches read by the rest of minidl.

They are module attributes so that a user can flip them in one line::

    minidl.config.default_dtype = 'float64'

All are shared by the whole process except ``grad_enabled``, which each
thread has for itself, so that a ``predict`` in one thread never stops
another thread's training from recording gradients.

Attributes:
    default_dtype: Floating dtype of tensors made from Python numbers and of
        newly initialised weights ('float32').
    deterministic: Use only algorithms whose results are bitwise repeatable
        (True). Every CPU kernel is; the flag selects algorithms on the GPU.
    use_onednn: 'auto' (run oneDNN's kernels on numpy arrays when it loads),
        'always' (fail if it does not) or 'never' (minidl's reference numpy
        code). oneDNN comes with the ``onednn`` extra (``minidl.compute.vendor``).
        The environment variable ``MINIDL_USE_ONEDNN`` sets the start value.
    use_cudnn: 'auto' (use cuDNN on CuPy arrays when it loads), 'always'
        (fail if it does not) or 'never' (plain CuPy kernels).
    allow_tf32: Let float32 convolutions and RNNs on the GPU use TF32 tensor
        cores (faster, about 10 bits of mantissa in products). Off, so that
        float32 means float32 on every device.
    grad_enabled: Whether operations in the current thread record the graph
        for backward. Every thread starts with True. Change it with
        ``minidl.no_grad()`` rather than by hand.
    image_data_format: The layout of images for layers given
        ``data_format=None``: 'channels_last' (NHWC) or 'channels_first'
        (NCHW); Keras's ``K.image_data_format()``.
    num_threads: How many threads CPU kernels split their work over
        (``minidl.compute.threads``): None for the environment variable
        ``MINIDL_NUM_THREADS``, or when it is not set the process's share of
        the CPUs (``threads.cpu_share()``: the CPUs it may use divided among
        the job's processes on this host), up to four (more are left to
        BLAS's own threads). While it is above 1, BLAS runs one thread per
        call in this process; at 1, at most the share. Results are bitwise
        the same for every value.
"""

import os
import sys
import threading
import types

default_dtype = 'float32'
deterministic = True
use_onednn = os.environ.get('MINIDL_USE_ONEDNN', 'auto')
use_cudnn = 'auto'
allow_tf32 = False
image_data_format = 'channels_last'
num_threads = None


class _PerThread(threading.local):
    """Switches each thread sets for itself; a new thread sees these class defaults."""

    grad_enabled = True
    # The casts of the mixed precision layer call in progress (a
    # minidl.layers.autocast.Scope), or None: read by every operation.
    autocast = None


# The object the autograd engine reads on every operation (one attribute look-up).
per_thread = _PerThread()


class _ConfigModule(types.ModuleType):
    """This module, with ``grad_enabled`` read and written in the current thread's state."""

    @property
    def grad_enabled(self):
        return per_thread.grad_enabled

    @grad_enabled.setter
    def grad_enabled(self, value):
        per_thread.grad_enabled = bool(value)


sys.modules[__name__].__class__ = _ConfigModule
