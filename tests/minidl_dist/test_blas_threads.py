"""Ranks sharing a host share its cores: BLAS runs no more threads than a rank's share."""

from tests.minidl_dist.launch import launch, results


def test_two_ranks_run_blas_on_their_share_of_the_cores(tmp_path):
    launch('blas_threads_worker.py', tmp_path, ranks=2).check()
    for output in results(tmp_path, 2):
        started, share = output['started'], output['share']
        assert started and output['pool'] == 1
        expected = [min(count, share) for count in started]  # never more than BLAS had
        assert output['after_init'] == expected  # before any task split
        assert output['after_step'] == expected
        if output['usable_cpus'] == 2:  # two ranks on two cores: one thread each
            assert share == 1 and started == [2] * len(started)
            assert output['after_step'] == [1] * len(started)
