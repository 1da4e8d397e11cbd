"""Compressed gradients under mpirun: 2 ranks train the digits MLP with QSGD and top-k.

(The same launch checks LearningRateWarmup's default scale, the number of ranks.)

One launch of scripts/compression_worker.py trains, per compression, two
models from the same seed; every rank reports its weights' digest, the loss
history, the bytes it sent during ``fit`` and the held-out accuracy.
"""

import math

import pytest

from tests.minidl_dist.launch import launch, results
from tests.minidl_dist.test_averaging import halving_doubling_bytes

pytestmark = pytest.mark.mpi

RANKS = 2
GRADIENTS = 64 * 128 + 128 + 128 * 10 + 10  # the MLP's trainable values
EXACT = 4 + 1       # summed exactly, as float32: a flag per weight, the count of parts
TOTALS = 2          # float64 loss sum and sample count, summed at every step
# Bytes a rank's gradient is encoded in: QSGD(levels=7, bucket_size=512) sends a float32
# norm per 512 values and 4 bits per value; TopK(ratio=0.01) an int32 index and a float32
# value for each of ceil(0.01 * 9610) = 97 values.
ENCODED = {'qsgd': 4 * math.ceil(GRADIENTS / 512) + math.ceil(GRADIENTS * 4 / 8),
           'topk': 8 * math.ceil(0.01 * GRADIENTS)}


@pytest.fixture(scope='module')
def outputs(tmp_path_factory):
    directory = tmp_path_factory.mktemp('compression')
    launch('compression_worker.py', directory, ranks=RANKS, timeout=180).check()
    return results(directory, RANKS)


@pytest.mark.parametrize('compression', ['qsgd', 'topk'])
def test_compressed_training_learns_replays_and_sends_what_the_formula_says(outputs, compression):
    first = outputs[0][f'{compression}/0']
    # Every rank holds the same bits, and a second run from the same seed gives them again.
    for output in outputs:
        for run in ('0', '1'):
            assert output[f'{compression}/{run}']['digest'] == first['digest']
            assert output[f'{compression}/{run}']['loss'] == first['loss']
    # The compression is used (other weights than the dense allreduce's), and the model learns.
    assert first['digest'] != outputs[0]['none/0']['digest']
    assert first['loss'][-1] < 0.5 * first['loss'][0]
    assert first['accuracy'] > 0.7  # ten classes: chance is 0.1
    # Per step, each rank sends its encoding to the other rank, the exact part's allreduce
    # and the loss totals' allreduce (3 epochs of ceil(1437 / 128) = 12 steps).
    steps = 3 * math.ceil(first['samples'] / 128)
    for rank, output in enumerate(outputs):
        expected = steps * (ENCODED[compression] * (RANKS - 1)
                            + halving_doubling_bytes(EXACT, 4, rank, RANKS)
                            + halving_doubling_bytes(TOTALS, 8, rank, RANKS))
        assert output[f'{compression}/0']['bytes'] == expected
    dense = steps * (halving_doubling_bytes(GRADIENTS + EXACT, 4, 0, RANKS)
                     + halving_doubling_bytes(TOTALS, 8, 0, RANKS))
    assert outputs[0]['none/0']['bytes'] == dense


def test_warmup_climbs_to_the_number_of_ranks_times_the_rate(outputs):
    # 12 batches in the one warm-up epoch: 0.1 * (1 + (2 - 1) * (b + 1) / 12) on every rank.
    expected = [0.1 * (1 + (batch + 1) / 12) for batch in range(12)]
    assert expected[0] == pytest.approx(0.10833333333333334) and expected[-1] == 0.2
    for output in outputs:
        assert output['warmup'] == pytest.approx(expected, rel=1e-12)
