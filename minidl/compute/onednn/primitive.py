"""Primitives: made once per configuration and shape, run on numpy arrays.

A :class:`Primitive` wraps a primitive descriptor and the primitive made
from it. It is made with a *user* scratchpad, so that its temporary memory
is a numpy buffer of the calling thread and the same primitive can run in
several of minidl's worker threads at once. :func:`cached` keeps primitives
under a key of everything that went into making them.

Threads: oneDNN's GOMP build fixes a primitive's thread count when the
primitive is made, from the making thread's ``omp_set_num_threads``, and
divides its work (and the order of its sums) for that count. So a
:class:`Primitive` is made for a thread count and always runs with it.
minidl runs oneDNN inside the tasks of its own pool
(:mod:`minidl.compute.threads`); kernels ask for :func:`call_threads`: the
process's share of the cores divided among the pool's threads, so that
oneDNN, OpenBLAS and the pool never ask for more threads than the cores this
process may use. Kernels whose sums would change with the count (the weight
gradients) ask for one thread.
"""

import collections
import ctypes
import threading

from minidl.compute import threads
from minidl.compute.onednn import api, constants, memory
from minidl.compute.onednn import library as onednn_library

CHUNKS = 4  # a batch is cut into this many chunks (fewer for a smaller batch)
MIN_CHUNK_WORK = 1 << 21  # multiply-adds: about 50 us on one core, against a ~60 us hand-off

_local = threading.local()  # .stream, .omp_threads: per calling thread
_engine = None
_cache, _cache_lock = collections.OrderedDict(), threading.Lock()
MAX_CACHED = 256


def engine():
    """The process's CPU engine."""
    global _engine
    if _engine is None:
        handle = ctypes.c_void_p()
        api.functions().engine_create(ctypes.byref(handle), constants.ENGINE_CPU, 0)
        _engine = handle
    return _engine


def call_threads():
    """OpenMP threads for one oneDNN call: this process's share of the cores, split
    among the threads of minidl's pool (1 on up to seven cores, 4 on sixteen)."""
    return max(1, threads.cpu_share() // threads.num_threads())


def _use_threads(omp_threads):
    """Set the calling thread's OpenMP thread count (oneDNN reads it when a primitive is made)."""
    if getattr(_local, 'omp_threads', None) != omp_threads:
        onednn_library.openmp().omp_set_num_threads(omp_threads)
        _local.omp_threads = omp_threads


KEPT_SCRATCHPAD_BYTES = 1 << 20


def _scratchpad(nbytes):
    """Scratch memory of ``nbytes`` for one primitive call on the calling thread.

    A primitive's scratchpad is only used during its call, and a thread runs
    one call at a time, so each thread keeps one buffer (grown as needed, up
    to ``KEPT_SCRATCHPAD_BYTES``) for every call: a new aligned buffer costs
    about 2 us, a sixth of a small product's call. Larger ones are made per
    call, where the kernel's own time dwarfs that.
    """
    if nbytes > KEPT_SCRATCHPAD_BYTES:
        return memory.buffer(nbytes)
    kept = getattr(_local, 'scratchpad', None)
    if kept is None or kept.nbytes < nbytes:
        kept = _local.scratchpad = memory.buffer(nbytes)
    return kept


def _stream():
    """The calling thread's stream."""
    stream = getattr(_local, 'stream', None)
    if stream is None:
        stream = _local.stream = ctypes.c_void_p()
        api.functions().stream_create(ctypes.byref(stream), engine(),
                                      constants.STREAM_DEFAULT_FLAGS)
    return stream


class Primitive:
    """One primitive and what running it needs.

    Args:
        create_descriptor: ``create_descriptor(pd_pointer, attr)`` calls a
            ``dnnl_*_primitive_desc_create`` with the attributes ``attr``.
        omp_threads: The OpenMP threads it is made for and runs on.

    Attributes:
        implementation: oneDNN's name for the implementation it chose, e.g.
            ``'brgconv:avx512_core'``; tests read it.
    """

    def __init__(self, create_descriptor, omp_threads):
        functions = api.functions()
        self.omp_threads = omp_threads
        # ``create_descriptor`` may make another primitive first (a backward's hint, the
        # forward, made on first use), which sets the count for itself: the count this
        # thread had is given back at the end, so that a primitive made inside another
        # leaves the outer one made for the outer's count. (A one-thread weight gradient
        # whose two-thread forward hint was made inside it ran, made for two threads, on
        # one, and its sums changed: the bits depended on the pool's size.)
        outer_threads = getattr(_local, 'omp_threads', None)
        _use_threads(omp_threads)
        try:
            self._make(functions, create_descriptor, omp_threads)
        finally:
            if outer_threads is not None:
                _use_threads(outer_threads)

    def _make(self, functions, create_descriptor, omp_threads):
        attr = ctypes.c_void_p()
        functions.primitive_attr_create(ctypes.byref(attr))
        try:
            functions.primitive_attr_set_scratchpad_mode(attr, constants.SCRATCHPAD_USER)
            self.descriptor = ctypes.c_void_p()
            create_descriptor(ctypes.byref(self.descriptor), attr)
        finally:
            functions.primitive_attr_destroy(attr)
        _use_threads(omp_threads)  # as it was before a primitive made inside the call above
        self.handle = ctypes.c_void_p()
        functions.primitive_create(ctypes.byref(self.handle), self.descriptor)
        info = ctypes.c_char_p()
        functions.primitive_desc_query(self.descriptor, constants.QUERY_IMPL_INFO_STR, 0,
                                       ctypes.byref(info))
        self.implementation = info.value.decode()
        self._mds = {}
        self.scratchpad_bytes = memory.size(self.md(constants.SCRATCHPAD))
        # Each calling thread binds its arrays to memories of its own, made on its
        # first call with that set of arguments and re-pointed at the arrays on
        # every call (a pointer swap, a few microseconds; making them costs ten times that).
        self._bound = threading.local()
        self._memories, self._memories_lock = [], threading.Lock()

    def md(self, arg):
        """The memory descriptor (a handle the primitive owns) of execution argument ``arg``."""
        if arg not in self._mds:
            self._mds[arg] = api.functions().primitive_desc_query_md(
                self.descriptor, constants.QUERY_EXEC_ARG_MD, arg)
        return self._mds[arg]

    def bytes(self, arg):
        """Bytes of argument ``arg`` in the layout this primitive wants."""
        return memory.size(self.md(arg))

    def execute(self, arrays):
        """Run on ``arrays`` (DNNL_ARG_* -> numpy array laid out as ``md(arg)`` says), on
        the thread count it was made for. Each array is only read through its data
        pointer, so it must have exactly the layout of ``md(arg)``."""
        functions = api.functions()
        _use_threads(self.omp_threads)
        stream = _stream()
        arrays = dict(arrays)
        if self.scratchpad_bytes:
            arrays[constants.SCRATCHPAD] = _scratchpad(self.scratchpad_bytes)
        memories, exec_args = self._bind(tuple(arrays))
        set_data_handle, address = functions.memory_set_data_handle_status, memory.address
        for handle, array in zip(memories, arrays.values()):
            status = set_data_handle(handle, address(array))
            if status:
                api.raise_for_status('memory_set_data_handle', status)
        functions.primitive_execute(self.handle, stream, len(memories), exec_args)
        status = functions.stream_wait_status(stream)
        if status:
            api.raise_for_status('stream_wait', status)

    def _bind(self, args):
        """The calling thread's memories for the arguments ``args`` and their exec-arg array."""
        bindings = getattr(self._bound, 'by_args', None)
        if bindings is None:
            bindings = self._bound.by_args = {}
        if args not in bindings:
            functions, memories = api.functions(), []
            for arg in args:
                handle = ctypes.c_void_p()
                functions.memory_create(ctypes.byref(handle), self.md(arg), engine(), None)
                memories.append(handle)
            with self._memories_lock:
                self._memories += memories
            bindings[args] = memories, (api.ExecArg * len(args))(
                *(api.ExecArg(arg, handle) for arg, handle in zip(args, memories)))
        return bindings[args]

    def __del__(self):
        if api is None:  # interpreter exit
            return
        functions = api.functions()
        for handle in getattr(self, '_memories', ()):
            functions.memory_destroy(handle)
        if getattr(self, 'handle', None):
            functions.primitive_destroy(self.handle)
        if getattr(self, 'descriptor', None):
            functions.primitive_desc_destroy(self.descriptor)


def reorder(source, target):
    """A one-thread reorder :class:`Primitive` from descriptor handle ``source`` to
    ``target`` (it reorders weights: small)."""
    return Primitive(lambda pd, attr: api.functions().reorder_primitive_desc_create(
        pd, source, engine(), target, engine(), attr), omp_threads=1)


def cached(key, make):
    """The primitive (or group of them) stored under ``key``, made by ``make()`` once.

    The :data:`MAX_CACHED` most recently used are kept: shapes that change
    from batch to batch (sequences of every length) must not grow the
    process without bound. One dropped between a kernel's forward and its
    backward is made again, the same way (its layouts follow from the key).
    """
    with _cache_lock:
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = make()
            while len(_cache) > MAX_CACHED:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
    return value


def batch_chunks(n, work, chunks=CHUNKS, even=False):
    """``(start, stop)`` of the at most ``chunks`` chunks a batch of ``n`` is cut into:
    fixed by the shapes alone.

    Kernels run one chunk per task of minidl's pool, and sum what they sum
    over the batch chunk by chunk in this order, so that no result depends on
    the number of threads. ``work`` is the batch's multiply-adds (or element
    visits): each chunk gets at least :data:`MIN_CHUNK_WORK` of it, since a
    smaller one costs more in its hand-off to a thread than it saves.

    ``even`` rounds a count above one up to an even one (one more than
    ``chunks`` where that is odd), for work that sums nothing over the batch
    (each image's result the same in any chunk): three equal chunks keep one
    of two threads waiting a third of the time.
    """
    chunks = max(1, min(chunks, work // MIN_CHUNK_WORK))
    if even and chunks > 1:
        chunks += chunks % 2
    size = -(-n // chunks)
    return [(start, min(start + size, n)) for start in range(0, n, size)]
