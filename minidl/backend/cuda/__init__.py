"""The GPU side of the backend: CuPy glue and minidl's own cuDNN binding.

Nothing here is imported by ``import minidl``: the modules load when a GPU
device or an accelerated kernel is first asked for, so minidl works with numpy
alone. ``runtime`` imports CuPy (with clear errors when it or the GPU is
missing), ``random`` draws seeded random numbers on the device with the same
bits as the host, ``segments`` sums sorted segments without float atomics, and
``cudnn`` is the ctypes binding to cuDNN 9.
"""
