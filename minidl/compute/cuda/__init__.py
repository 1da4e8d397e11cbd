"""The GPU side of minidl.compute: CuPy glue and minidl's own cuDNN binding.

``import minidl`` loads neither CuPy nor cuDNN: CuPy is imported, and cuDNN
loaded, when a GPU device or an accelerated kernel is first asked for, so
minidl works with numpy alone. ``runtime`` imports CuPy (with clear errors
when it or the GPU is missing), ``random`` draws seeded random numbers on the
device with the same bits as the host, ``segments`` sums sorted segments
without float atomics, and ``cudnn`` is the ctypes binding to cuDNN 9.
"""
