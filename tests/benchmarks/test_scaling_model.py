"""The scaling model's formulas against minidl_dist's own counts, and its basic shape.

No mpirun and no timing: the bytes come from the real Reducer run rank by
rank against a stand-in communicator, and from benchmarks.hybrid's formula
(which the hybrid benchmark checks against dist.bytes_sent on 2 and 4 ranks).
"""

import numpy as np
import pytest

from benchmarks.scaling import model as scaling
from benchmarks.scaling.schemes import data_parallel, hybrid, model_averaging
from minidl_dist import traffic
from minidl_dist.allreduce import Reducer

LINKS = dict(local=scaling.Link(2e-6, 1e-10), network=scaling.Link(2e-5, 2e-9),
             gamma=2e-11, copy=2e-11)
WORKLOAD = {'params': 1_000_000, 'states': 100, 'tensors': 10, 'hybrid_layers': [[512, 256],
            [256, 10]], 'hybrid_params': 512 * 256 + 256 + 256 * 10 + 10,
            'rows_per_sample': 1, 'fixed_s': 0.01, 'per_sample_s': 0.002}


class OneRank:
    """A communicator seen from one rank: exchanges return zeros, so only sends are counted."""

    def __init__(self, rank, size):
        self.rank, self.size = rank, size

    def Get_rank(self):  # noqa: N802 (mpi4py's names)
        return self.rank

    def Get_size(self):  # noqa: N802
        return self.size

    def Sendrecv(self, sendbuf, dest, recvbuf, source):  # noqa: N802
        assert 0 <= dest < self.size and 0 <= source < self.size
        recvbuf[...] = 0


def reducer_bytes(count, dtype, ranks, bucket_bytes):
    """Bytes all ranks send in the Reducer's sum of ``count`` values, summed over ranks."""
    total = 0
    for rank in range(ranks):
        before = traffic.bytes_sent()
        Reducer(OneRank(rank, ranks), bucket_bytes).sum_(np.zeros(count, dtype))
        total += traffic.bytes_sent() - before
    return total


@pytest.mark.parametrize('ranks', [2, 3, 4, 5, 8])
@pytest.mark.parametrize('count', [1, 1000, 4097, 30001])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_allreduce_bytes_are_what_the_reducer_sends(ranks, count, dtype):
    itemsize = np.dtype(dtype).itemsize
    # 4 KiB buckets: the larger buffers are cut into pieces, some not divisible by the ranks.
    sent = reducer_bytes(count, dtype, ranks, bucket_bytes=4096)
    assert scaling.allreduce_bytes(count, itemsize, ranks) * ranks == pytest.approx(sent)


def test_data_parallel_and_hybrid_bytes_match_the_hybrid_benchmarks_formula():
    hybrid_benchmark = pytest.importorskip('benchmarks.hybrid')
    from minidl.layers import Conv2D, Dense, Flatten, Input
    from minidl.models import Sequential
    from minidl.optimizers import SGD
    model = Sequential([Input((6, 6, 2)), Conv2D(3, 3), Flatten(), Dense(20, name='fc6'),
                        Dense(12, name='fc7'), Dense(5, name='predictions')])
    model.compile(SGD(0.01), 'categorical_crossentropy')
    layers = [model.get_layer(name) for name in hybrid_benchmark.MODEL_PARALLEL]
    workload = {**WORKLOAD, 'params': sum(w.size for w in model.trainable_weights), 'states': 0,
                'tensors': len(model.trainable_weights),
                'hybrid_layers': [[layer.kernel.shape[0], layer.units] for layer in layers],
                'hybrid_params': sum(w.size for layer in layers for w in layer.weights)}
    machine = scaling.Machine(**LINKS, per_host=2)
    for ranks in (2, 4, 8):
        for batch in (8, 64):
            expected = hybrid_benchmark.expected_bytes(model, True, batch, ranks)
            assert hybrid(workload, ranks, batch, machine)[1] == pytest.approx(expected)
            # Data-parallel also sums one flag per weight and the part count (the Packing).
            expected = hybrid_benchmark.expected_bytes(model, False, batch, ranks)
            flags = scaling.allreduce_bytes(workload['tensors'] + 1, 4, ranks)
            assert data_parallel(workload, ranks, batch, machine)[1] == \
                pytest.approx(expected + flags)


def test_allreduce_seconds_by_hand():
    machine = scaling.Machine(**LINKS, per_host=2)
    local, network, gamma = LINKS['local'], LINKS['network'], LINKS['gamma']
    n = 1 << 20  # one bucket
    two = 2 * (local.alpha + n / 2 * local.beta) + n / 2 * gamma
    assert scaling.allreduce_seconds(n, 2, machine) == pytest.approx(two)
    # 4 ranks, 2 a host: distance 1 on the host, distance 2 across, both ranks of a
    # host on the link at once.
    four = two + 2 * (network.alpha + n / 4 * network.beta * 2) + n / 4 * gamma
    assert scaling.allreduce_seconds(n, 4, machine) == pytest.approx(four)
    assert scaling.allreduce_seconds(3 * n, 4, machine, bucket_bytes=n) == \
        pytest.approx(3 * four)
    slow = scaling.Machine(**LINKS, per_host=2, oversubscription=2)
    assert scaling.allreduce_seconds(n, 4, slow) == pytest.approx(2 * four)


def test_one_worker_has_no_communication_and_efficiency_falls_with_workers():
    machine = scaling.Machine(**LINKS, per_host=4)
    single = WORKLOAD['fixed_s'] + 32 * WORKLOAD['per_sample_s']
    for scheme in (data_parallel, hybrid, model_averaging):
        assert scheme(WORKLOAD, 1, 32, machine) == (pytest.approx(single), 0.0)
    for scheme in (data_parallel, model_averaging):
        efficiency = [single / scheme(WORKLOAD, p, 32 * p, machine)[0] for p in (1, 2, 4, 8, 64)]
        assert efficiency[0] == 1 and all(np.diff(efficiency) <= 0), efficiency
        sent = [scheme(WORKLOAD, p, 32 * p, machine)[1] for p in (1, 2, 4, 8, 64)]
        assert all(np.diff(sent) > 0), sent
    # Averaging every 4 steps sends (weights + momentum) / 4 per step: half the gradients.
    dp_sent = data_parallel(WORKLOAD, 8, 256, machine)[1]
    average_sent = model_averaging(WORKLOAD, 8, 256, machine, period=4)[1]
    totals = scaling.allreduce_bytes(scaling.TOTALS, 8, 8)
    assert average_sent - totals == pytest.approx(
        scaling.allreduce_bytes(2 * WORKLOAD['params'] + WORKLOAD['states'], 4, 8) / 4)
    assert average_sent < dp_sent


def test_ping_pong_fit_takes_latency_from_small_and_bandwidth_from_large_messages():
    from benchmarks.scaling.pingpong import fit_line
    sizes = [8, 1024, 1 << 20, 4 << 20, 16 << 20]
    # Small messages slower than the large ones' line predicts (as between the fake hosts).
    seconds = [1e-5, 5e-5, 1e-5 + (1 << 20) * 1e-9, 1e-5 + (4 << 20) * 1e-9,
               1e-5 + (16 << 20) * 1e-9]
    alpha, beta = fit_line(sizes, seconds)
    assert alpha == pytest.approx(1e-5) and beta == pytest.approx(1e-9)
