"""Mixed precision under mpirun: DistributedOptimizer(LossScaleOptimizer(SGD)) on 2 ranks.

The gradients are summed over the ranks before the LossScaleOptimizer looks
at them, so every rank skips the same steps and moves the scale alike; with
micro_shards the weights are one process's bits.
"""

import pytest

from tests.minidl_dist.launch import launch, results

pytest.importorskip('mpi4py')
pytest.importorskip('sklearn')  # the digits

pytestmark = pytest.mark.mpi


def test_ranks_skip_the_same_steps_and_give_one_process_bits(tmp_path):
    one, two = tmp_path / 'one', tmp_path / 'two'
    one.mkdir(), two.mkdir()
    launch('mixed_precision_worker.py', one, timeout=120).check()
    launch('mixed_precision_worker.py', two, ranks=2, timeout=180).check()
    [alone], pair = results(one, 1), results(two, 2)
    assert pair[0] == pair[1] == alone
    steps = alone['steps']
    assert alone['iterations'] == len(steps) == 2 * 8  # 512 samples, batches of 64
    # From 2**40 the scale halves at each overflowing (skipped) step until float16 holds
    # the scaled gradients; then every step applies (fewer than 2000: no doubling).
    skipped = [step for step in steps if step[1]]
    assert skipped and steps[:len(skipped)] == skipped
    assert [scale for scale, _ in skipped] == [2.0 ** (39 - i) for i in range(len(skipped))]
    assert all(scale == skipped[-1][0] for scale, _ in steps[len(skipped):])
    assert alone['dtypes'] == ['float32']
