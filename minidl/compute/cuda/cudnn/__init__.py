"""minidl's ctypes binding to cuDNN 9 (CuPy 14 no longer has one).

``library`` finds and loads the libraries, ``api`` declares the functions and
turns failed statuses into :class:`~minidl.compute.cuda.cudnn.api.CudnnError`,
``constants`` holds the enums, ``handle`` the per-device handle and the plan
cache, ``descriptors`` and ``algorithms`` the shared pieces. One module per
operation (``convolution``, ``pooling``, ``batch_norm``, ``rnn`` with
``rnn_weights``) holds a kernel class with the forward and backward of the
matching Function of ``minidl.functions``; ``kernels`` hands them out through
``minidl.compute.vendor``, with the same names as ``onednn.kernels``. None of
them imports CuPy: they take CuPy arrays and reach CuPy through
``minidl.compute.cuda.runtime``.
"""
