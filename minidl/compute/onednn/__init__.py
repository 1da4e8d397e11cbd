"""minidl's ctypes binding to oneDNN 3 on the CPU, the counterpart of ``cuda.cudnn``.

``library`` finds and loads ``libdnnl.so.3`` (the ``onednn-cpu-gomp`` wheel of
minidl's ``onednn`` extra), ``api`` declares the functions and turns failed
statuses into :class:`~minidl.compute.onednn.api.OnednnError`, ``constants``
holds the enums, ``memory`` describes numpy arrays to oneDNN, and
``primitive`` builds, caches and runs primitives (reorders included) on
numpy arrays. One module per operation (``convolution``, also depthwise and
transposed, ``pooling``, ``batch_norm``, ``rnn``, ``dense`` on the products
of ``matmul``) holds a kernel class with the forward and backward of the
matching Function of ``minidl.functions``;
``kernels`` hands them out through ``minidl.compute.vendor``, with the same
names as ``cuda.cudnn.kernels``.
"""
