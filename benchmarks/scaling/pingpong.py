"""Latency and bandwidth of one message between two ranks: the scaling model's alpha and beta.

Run with exactly 2 ranks, on one host (shared memory) or on two (TCP)::

    mpirun -np 2 python -m benchmarks.scaling.pingpong
    python -m minidl_dist.fakehosts --hosts 2 -np 2 python -m benchmarks.scaling.pingpong

The two ranks exchange float32 buffers with ``Sendrecv``, both sending at
once, as every step of minidl_dist's allreduce does, from 8 bytes to
16 MiB; each size's time is the lower quartile over repeats (the least disturbed
by other work on the machine) of the slower rank.
The line ``t(n) = alpha + beta n`` (:func:`fit_line`) gives alpha
(s per message) and beta (s per byte). Rank 0 also times ``numpy.add`` in place on 4 MiB of float32
(gamma, s per byte added: the allreduce's local work) and a copy (the
packing of gradients). Rank 0 prints one JSON line.
"""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

SIZES = [8, 1 << 10, 16 << 10, 128 << 10, 1 << 20, 4 << 20, 16 << 20]


def exchange_seconds(comm, nbytes, repeats):
    """Median seconds of one simultaneous exchange of ``nbytes`` (slower rank's)."""
    partner = 1 - comm.Get_rank()
    outgoing = np.zeros(max(1, nbytes // 4), np.float32)
    incoming = np.empty_like(outgoing)
    times = []
    for index in range(repeats + 2):
        comm.Barrier()
        start = time.perf_counter()
        comm.Sendrecv(outgoing, partner, recvbuf=incoming, source=partner)
        if index >= 2:  # the first two connect and warm the path up
            times.append(time.perf_counter() - start)
    return comm.allreduce(float(np.percentile(times, 25)), op=MPI.MAX)


def fit_line(sizes, seconds, large=1 << 20):
    """``(alpha, beta)`` of ``t = alpha + beta n`` (Hockney's fit).

    alpha is the smallest message's time; beta the least-squares slope of
    ``t - alpha`` over the messages of at least ``large`` bytes, which carry
    the allreduce's buckets. (A line through all sizes at once lets the
    many small messages set beta: between the fake hosts that halved the
    time of a 4 MiB message.)
    """
    sizes, seconds = np.asarray(sizes, float), np.asarray(seconds, float)
    alpha = float(seconds[np.argmin(sizes)])
    chosen = sizes >= large
    beta = float(np.sum((seconds[chosen] - alpha) * sizes[chosen]) / np.sum(sizes[chosen] ** 2))
    return alpha, beta


def local_rates(repeats=20):
    """Seconds per byte of an in-place float32 add and of a copy, on 4 MiB."""
    a, b = np.ones(1 << 20, np.float32), np.ones(1 << 20, np.float32)
    adds, copies = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        np.add(a, b, out=a)
        adds.append(time.perf_counter() - start)
        start = time.perf_counter()
        np.copyto(b, a)
        copies.append(time.perf_counter() - start)
    return float(np.median(adds)) / a.nbytes, float(np.median(copies)) / a.nbytes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=30)
    parser.add_argument('--label', default='', help='a name for this link in the output')
    args = parser.parse_args(argv)
    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        raise SystemExit(f'pingpong needs exactly 2 ranks, got {comm.Get_size()}')
    seconds = [exchange_seconds(comm, size, args.repeats if size < (4 << 20) else 10)
               for size in SIZES]
    hosts = len(set(comm.allgather(MPI.Get_processor_name())))
    if comm.Get_rank() == 0:
        alpha, beta = fit_line(SIZES, seconds)
        gamma, copy = local_rates()
        print(json.dumps({'label': args.label, 'alpha_s': alpha, 'beta_s_per_byte': beta,
                          'gamma_s_per_byte': gamma, 'copy_s_per_byte': copy,
                          'sizes': SIZES, 'seconds': seconds, 'hosts': hosts}), flush=True)


if __name__ == '__main__':
    main()
