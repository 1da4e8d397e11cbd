"""Fail fast: errors on one rank end the whole job in seconds, naming the rank and why."""

from tests.minidl_dist.launch import launch


def failed(case):
    run = launch('failing_worker.py', case, ranks=2, timeout=60)
    assert run.returncode != 0
    assert run.seconds < 30
    return run.stderr


def test_an_exception_on_rank_1_aborts_the_job_naming_the_rank_and_the_step():
    stderr = failed('raise')
    assert 'minidl_dist: rank 1 of 2 failed while training step 2, forward and backward of ' \
           'samples 8:16 of the global batch' in stderr
    assert 'RuntimeError: simulated failure in a layer' in stderr


def test_different_weight_shapes_are_reported_at_start():
    stderr = failed('shapes')
    assert 'failed while broadcasting rank 0\'s weights' in stderr
    assert 'ValueError: the ranks have different model weights or optimizer state' in stderr
    assert "rank 1: entry 2 is ('dense_1/kernel:0', (8, 11), 'float32'), rank 0 has " \
           "('dense_1/kernel:0', (8, 10), 'float32')" in stderr


def test_a_global_batch_that_the_ranks_cannot_split_is_refused():
    stderr = failed('batch')
    assert 'batch_size=33 is the global batch size, split over 2 ranks; it must be ' \
           'divisible by 2' in stderr

