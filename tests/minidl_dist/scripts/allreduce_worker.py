"""Sums random buffers with minidl_dist's allreduce and with a fixed-order reference.

Usage: allreduce_worker.py OUTPUT_DIR. Each rank writes rank<r>.json with,
per case, the sha256 of its result and of the reference: the ranks' inputs
copied with MPI_Allgather (no arithmetic) and added in the documented
order by plain numpy code. Also checks the Horovod-style collectives.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np

import minidl
import minidl_dist as dist
from minidl_dist.allreduce import Reducer
from minidl_dist.comm import world

BUCKET = 4096  # bytes: small, so that the larger cases are cut into pieces


def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def tree_sum(values):
    """((v0 + v1) + (v2 + v3)) ...: the order for a power-of-two number of ranks."""
    if len(values) == 1:
        return values[0]
    half = len(values) // 2
    return tree_sum(values[:half]) + tree_sum(values[half:])


def ring_sum(values, piece):
    """Chunk c of each piece summed as ((v_c + v_c+1) + v_c+2) ...: the ring's order."""
    size = len(values)
    total = np.empty_like(values[0])
    for start in range(0, total.size, piece):
        stop = min(start + piece, total.size)
        bounds = [start + index * (stop - start) // size for index in range(size + 1)]
        for chunk in range(size):
            part = slice(bounds[chunk], bounds[chunk + 1])
            value = values[chunk][part].copy()
            for offset in range(1, size):
                value = value + values[(chunk + offset) % size][part]
            total[part] = value
    return total


def main(output):
    dist.init()
    comm, rank, size = world(), dist.rank(), dist.size()
    cases = {}
    for dtype in ('float32', 'float64'):
        for length in (1, 3, 1000, 4099, 50_001):
            local = np.random.default_rng([rank, length]).normal(size=length).astype(dtype)
            everyone = np.empty((size, length), dtype)
            comm.Allgather(local, everyone)
            if size & (size - 1) == 0:
                reference = tree_sum(list(everyone))
            else:
                reference = ring_sum(list(everyone), BUCKET // everyone.itemsize)
            result = Reducer(comm, bucket_bytes=BUCKET).sum_(local.copy())
            cases[f'{dtype}-{length}'] = {'result': digest(result), 'reference': digest(reference),
                                          'left_to_right': digest(np.add.reduce(everyone))}
    # sum_scatter: uneven blocks, one per rank; this rank's block of the same sum.
    sizes = [1000 + 7 * r for r in range(size)]
    local = np.random.default_rng([rank, 5]).normal(size=sum(sizes)).astype('float32')
    everyone = np.empty((size, local.size), 'float32')
    comm.Allgather(local, everyone)
    total = tree_sum(list(everyone)) if size & (size - 1) == 0 \
        else ring_sum(list(everyone), BUCKET // 4)
    start = sum(sizes[:rank])
    scattered = Reducer(comm, bucket_bytes=BUCKET).sum_scatter(local.copy(), sizes)
    sum_scatter = {'result': digest(scattered),
                   'reference': digest(total[start:start + sizes[rank]])}
    local = np.random.default_rng([rank, 7]).normal(size=20_000).astype('float32')
    exact = np.empty((size, local.size), 'float32')
    comm.Allgather(local, exact)
    compressed = Reducer(comm, bucket_bytes=BUCKET, wire_dtype='float16').sum_(local.copy())
    error = np.abs(compressed - exact.astype('float64').sum(0)).max()
    # Bytes sent for one float32 sum of 4092 values (a multiple of 2, 3 and 4).
    before = dist.bytes_sent()
    Reducer(comm).sum_(np.ones(4092, np.float32))
    sent_for_sum = dist.bytes_sent() - before
    before = dist.bytes_sent()
    dist.allgather(np.ones((rank + 1, 3), np.float64))
    sent_for_gather = dist.bytes_sent() - before
    summary = {
        'cases': cases,
        'sum_scatter': sum_scatter,
        'bytes_sent': {'sum': sent_for_sum, 'gather': sent_for_gather},
        'fp16': {'result': digest(compressed), 'max_error': float(error),
                 'on_fp16_grid': bool((compressed.astype('float16') == compressed).all())},
        'mean': dist.allreduce(float(rank)),
        'sum_tensor': dist.allreduce(minidl.Tensor(np.full(3, rank + 1.0)), average=False)
                          .data.tolist(),
        'broadcast': dist.broadcast(np.arange(4.0) + 10 * rank, root_rank=size - 1).tolist(),
        'allgather': dist.allgather(np.full((rank + 1, 2), rank)).tolist(),
    }
    (pathlib.Path(output) / f'rank{rank}.json').write_text(json.dumps(summary))


if __name__ == '__main__':
    main(sys.argv[1])
