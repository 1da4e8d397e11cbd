"""The fixed-order allreduce: bitwise the documented sum, on every rank, in every run."""

import numpy as np
import pytest

from tests.minidl_dist.launch import launch, results


@pytest.mark.parametrize('ranks', [2, 3, 4])
def test_allreduce_is_the_fixed_order_sum_on_every_rank(tmp_path, ranks):
    launch('allreduce_worker.py', tmp_path, ranks=ranks).check()
    outputs = results(tmp_path, ranks)
    for output in outputs:
        for case, digests in output['cases'].items():
            assert digests['result'] == digests['reference'], case
        assert output['cases'] == outputs[0]['cases']
        # Each rank's block of the sum, in the same order as the allreduce's.
        assert output['sum_scatter']['result'] == output['sum_scatter']['reference']
    if ranks == 4:  # the order matters: a left-to-right sum has other bits
        large = outputs[0]['cases']['float32-50001']
        assert large['left_to_right'] != large['reference']
    for output in outputs:
        # float16 on the wire: float32 sums, rounded once, the same bits everywhere.
        assert output['fp16']['result'] == outputs[0]['fp16']['result']
        assert output['fp16']['on_fp16_grid']
        assert output['fp16']['max_error'] < 0.02 * ranks
        assert output['mean'] == pytest.approx(np.mean(range(ranks)), abs=1e-15)
        assert output['sum_tensor'] == [ranks * (ranks + 1) / 2] * 3
        assert output['broadcast'] == (np.arange(4.0) + 10 * (ranks - 1)).tolist()
        assert output['allgather'] == [[r, r] for r in range(ranks) for _ in range(r + 1)]
    for rank, output in enumerate(outputs):
        # Each rank sends 2 (N - 1) / N of the buffer (halving-doubling and ring alike),
        # and an all-gather sends its rows once to every other rank.
        assert output['bytes_sent']['sum'] == 2 * (ranks - 1) * 4092 * 4 // ranks
        assert output['bytes_sent']['gather'] == (rank + 1) * 3 * 8 * (ranks - 1)


def test_allreduce_gives_the_same_bits_in_every_run(tmp_path):
    first, second = tmp_path / 'first', tmp_path / 'second'
    for directory in (first, second):
        directory.mkdir()
        launch('allreduce_worker.py', directory, ranks=4).check()
    assert results(first, 4)[0] == results(second, 4)[0]
