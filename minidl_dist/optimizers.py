"""DistributedOptimizer: the one change a Keras script's compile needs."""

from minidl import optimizers
from minidl_dist import comm
from minidl_dist.allreduce import BUCKET_BYTES, Reducer
from minidl_dist.compressed import CompressedDataParallel, codec_of
from minidl_dist.hybrid import HybridParallel
from minidl_dist.strategy import DataParallel

_COMPRESSIONS = {None: None, 'none': None, 'fp16': 'float16', 'float16': 'float16'}


def DistributedOptimizer(optimizer, micro_shards=None, compression=None,  # noqa: N802 (Horovod's name)
                         bucket_bytes=BUCKET_BYTES, every_rank_writes=False, model_parallel=None):
    """Make ``model.compile(optimizer=...)`` train data-parallel over the job's ranks.

    The optimizer itself is returned (so that saving and loading see, e.g.,
    an Adam), with a :class:`~minidl_dist.strategy.DataParallel` strategy
    that ``fit``, ``evaluate`` and ``predict`` follow. ``batch_size`` in
    ``fit`` is then the global batch, split evenly over the ranks.

    Args:
        optimizer: Any minidl optimizer (an instance or a name such as 'adam').
        micro_shards: None (plain data parallelism: results are fixed for a
            given number of ranks and match one process up to rounding), or
            S, a power of two divisible by the number of ranks: each global
            batch is cut into S micro-shards, each computed alone (its own
            batch-norm statistics and dropout draws), and their gradients
            summed in one fixed tree, so that 1, 2, 4, ... ranks give
            bitwise identical weights. Cost: a rank runs S/N smaller
            forward/backward passes instead of one (less efficient on small
            batches), and batch normalization sees micro-shards of
            batch/S samples.
        compression: None; 'fp16' to send gradients as float16 (summed in
            float32): half the traffic, at float16 precision of the sums;
            'qsgd' or a :class:`~minidl_dist.qsgd.QSGD` (stochastic
            quantization, unbiased: 4 bits per value by default); 'topk' or a
            :class:`~minidl_dist.topk.TopK` (the largest 1 % of the values by
            default, with error feedback). QSGD and top-k all-gather each
            rank's encoded gradient and add the decodings in rank order
            (:mod:`minidl_dist.compressed`). Not allowed with
            ``micro_shards``, whose sums must be exact; QSGD and top-k not
            with ``model_parallel``.
        bucket_bytes: Size of the pieces gradients are reduced in.
        every_rank_writes: Let every rank print progress and write files
            (checkpoints, CSV logs, ``model.save``); by default only rank 0 does.
        model_parallel: None (every layer data-parallel), a list of names of
            Dense layers, or 'dense' (every Dense layer after the last
            convolution): those layers are split by columns over the ranks,
            and every layer from the first of them on computes the global
            batch (hybrid parallelism, :mod:`minidl_dist.hybrid`). ``compile``
            then places the model; ``get_weights``, ``set_weights``,
            ``save``, ``save_weights``, ``load_weights``, ``summary`` and
            ``count_params`` gather the shards, so every rank must call them.

    Returns:
        The optimizer, now distributed.

    Raises:
        RuntimeError: If ``minidl_dist.init()`` was not called.
        ValueError: For a bad ``micro_shards``, ``compression`` or
            ``model_parallel`` (compile raises for layers the model lacks
            or cannot split).
    """
    optimizer = optimizers.get(optimizer)
    if optimizer.strategy is not None:
        raise ValueError(f'{optimizer.name} is already distributed')
    codec = codec_of(compression)
    if codec is None and (not isinstance(compression, (str, type(None)))
                          or compression not in _COMPRESSIONS):
        raise ValueError(f"compression must be None, 'fp16', 'qsgd', 'topk', a QSGD or a TopK, "
                         f"got {compression!r}")
    world = comm.world()
    ranks = world.Get_size()
    if micro_shards is not None:
        if isinstance(micro_shards, bool) or not isinstance(micro_shards, int) \
                or micro_shards < 1 or micro_shards & (micro_shards - 1) \
                or micro_shards % ranks:
            raise ValueError(f'micro_shards must be a power of two divisible by the number of '
                             f'ranks ({ranks}), so that each rank holds a subtree of the sum; '
                             f'got {micro_shards!r}')
        if codec is not None or _COMPRESSIONS[compression] is not None:
            raise ValueError(f'micro_shards needs exact sums; it cannot be combined with '
                             f'{compression!r} compression')
    if codec is not None:
        if model_parallel is not None:
            raise ValueError(f'{codec!r} compression applies to data parallelism; it cannot be '
                             f'combined with model_parallel (use fp16 there)')
        optimizer.strategy = CompressedDataParallel(world, Reducer(world, bucket_bytes), codec,
                                                    every_rank_writes)
        return optimizer
    reducer = Reducer(world, bucket_bytes, _COMPRESSIONS[compression])
    if model_parallel is None:
        optimizer.strategy = DataParallel(world, reducer, micro_shards, every_rank_writes)
    else:
        optimizer.strategy = HybridParallel(world, reducer, _layer_names(model_parallel),
                                            micro_shards, every_rank_writes)
    return optimizer


def _layer_names(model_parallel):
    if model_parallel == 'dense':
        return model_parallel
    if not isinstance(model_parallel, (list, tuple)) or not all(isinstance(name, str)
                                                                for name in model_parallel):
        raise ValueError(f"model_parallel must be 'dense' or a list of layer names, "
                         f"got {model_parallel!r}")
    names = list(model_parallel)
    if not names or len(set(names)) != len(names):
        raise ValueError(f'model_parallel must name each layer once, got {names}')
    return names
