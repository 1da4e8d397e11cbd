"""The seam between minidl's Functions and the vendor libraries.

numpy arrays go to oneDNN (:mod:`minidl.compute.onednn`), CuPy arrays to
cuDNN (:mod:`minidl.compute.cuda.cudnn`). Each library has a ``kernels``
module with the same factories (``conv2d``, ``pool2d``, ``batch_norm``, ...),
each taking the dtype and the Function's parameters and returning a kernel
with the Function's forward and backward, or None for what the library
cannot compute. A Function shows both branches side by side::

    def forward(self, x, kernel, *bias):
        self.vendor_kernel = vendor.kernel(self.xp, 'conv2d', x.dtype, strides=...)
        if self.vendor_kernel is not None:
            return self.vendor_kernel.forward(x, kernel, *bias)
        ...  # the reference code, in numpy or CuPy

Which library may run is set by ``minidl.config.use_onednn`` and
``minidl.config.use_cudnn``: 'auto' (when it loads), 'always' (an error that
says what is missing and how to install it when it does not) or 'never'
(the reference code only). Loading is tried once per process and library.
"""

import numpy as np

from minidl import config

MODES = ('auto', 'always', 'never')

# switch name -> the loaded library's kernels module, or the exception that
# stopped it loading.
_loaded = {}


def kernels(xp):
    """The ``kernels`` module of the library for arrays of module ``xp``, or None.

    Raises:
        ValueError: The library's switch is not 'auto', 'always' or 'never'.
        RuntimeError: The switch is 'always' and the library cannot be
            loaded; the message says what is missing and how to install it.
    """
    switch = 'use_onednn' if xp is np else 'use_cudnn'
    choice = mode(switch)
    if choice == 'never':
        return None
    if switch not in _loaded:
        _loaded[switch] = _load(switch)
    loaded = _loaded[switch]
    if isinstance(loaded, Exception):
        if choice == 'always':
            raise RuntimeError(f"minidl.config.{switch} is 'always' but {loaded}") from loaded
        return None
    return loaded


def kernel(xp, name, dtype, **params):
    """The vendor kernel ``name`` of :func:`kernels` for ``dtype`` and ``params``, or None
    (no library for ``xp``, or one that cannot compute this configuration)."""
    library = kernels(xp)
    return None if library is None else getattr(library, name)(dtype, **params)


def mode(switch):
    """``config.use_onednn`` or ``config.use_cudnn`` (named by ``switch``), checked.

    Raises:
        ValueError: It is not 'auto', 'always' or 'never'.
    """
    value = getattr(config, switch)
    if value not in MODES:
        raise ValueError(f"minidl.config.{switch} must be 'auto', 'always' or 'never', "
                         f'got {value!r}')
    return value


def _load(switch):
    """The kernels module behind ``switch``, or the exception that says why it did not load."""
    if switch == 'use_onednn':
        from minidl.compute.onednn import api, kernels as library_kernels
        from minidl.compute.onednn.library import OnednnUnavailable as Unavailable
    else:
        from minidl.compute.cuda.cudnn import api, kernels as library_kernels
        from minidl.compute.cuda.cudnn.library import CudnnUnavailable as Unavailable
    try:
        api.functions()
    except Unavailable as error:
        return error
    return library_kernels


def forget():
    """Forget what loaded (tests that change the environment, or the switches' libraries)."""
    _loaded.clear()
