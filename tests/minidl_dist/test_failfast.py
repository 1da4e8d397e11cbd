"""Fail fast: errors on one rank end the whole job in seconds, naming the rank and why.

These run the worker as ``mpirun python failing_worker.py`` (what
``dist.init()`` installs) unless they say otherwise; ``test_ending.py``
covers every way of ending under the launcher.
"""

import re

from tests.minidl_dist.launch import launch


def failed(case, launcher=False):
    run = launch('failing_worker.py', case, ranks=2, timeout=60, launcher=launcher)
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



def test_sys_exit_under_the_launcher_aborts_the_job_naming_the_rank_status_and_step():
    stderr = failed('exit', launcher=True)
    assert 'minidl_dist: rank 1 of 2 exited with status 3 (SystemExit(3)) while training ' \
           'step 2, forward and backward of samples 8:16 of the global batch' in stderr


def test_sys_exit_without_the_launcher_ends_the_job_as_an_early_end():
    # Without the launcher the status is not seen, but the rank's end is: at exit it tells
    # the others, and rank 0, waiting in the gradient sum, aborts.
    stderr = failed('exit')
    assert re.search(r'minidl_dist: rank 1 of 2 ended its script \(by its end or by a '
                     r'SystemExit: python -m minidl_dist tells which\) after \d+ collectives; '
                     r'rank 0 \(training step 2, summing gradients over ranks\) still waits '
                     r"for it in 'a sum over ranks of \d+ values'", stderr), stderr


def test_a_handled_sys_exit_is_forgotten_and_the_job_succeeds():
    run = launch('failing_worker.py', 'exit_handled', ranks=2, timeout=60).check()
    assert 'rank 1: handled exit 3' in run.stdout
    assert 'rank 0: done' in run.stdout and 'rank 1: done' in run.stdout
    assert 'aborting' not in run.stderr


def test_a_rank_that_catches_an_error_and_goes_on_is_caught_by_the_collective_timeout():
    # Rank 1 sleeps a minute after catching; rank 0 waits in the gradient sum.
    run = launch('failing_worker.py', 'caught', ranks=2, timeout=60,
                 env={'MINIDL_DIST_TIMEOUT': '3'})
    assert run.returncode != 0
    assert 3 < run.seconds < 30
    assert re.search(r"minidl_dist: rank 0 of 2 waited \d+\.\d s \(timeout 3 s, "
                     r"MINIDL_DIST_TIMEOUT\) for the other ranks in 'a sum over ranks of "
                     r"\d+ values' while training step 2, summing gradients over ranks",
                     run.stderr), run.stderr


def test_a_rank_killed_with_sigkill_ends_the_job_and_the_rank_map_names_it():
    run = launch('failing_worker.py', 'kill', ranks=2, timeout=60)
    assert run.returncode != 0
    assert run.seconds < 30
    output = run.stdout + run.stderr
    ranks = dict(re.findall(r'rank (\d) = pid (\d+) on ', output))
    # mpirun names the dead process by its pid; rank 0's start-up line maps it to rank 1.
    dead = re.search(r'PID (\d+) RUNNING AT .*\n.*EXIT CODE: 9', output)
    assert dead is not None, output
    assert ranks['1'] == dead.group(1) and ranks['0'] != dead.group(1)


def test_different_sample_counts_are_refused_on_every_rank_before_any_step():
    run = launch('failing_worker.py', 'samples', ranks=2, timeout=60)
    assert run.returncode != 0 and run.seconds < 30
    for rank in (0, 1):
        assert f'minidl_dist: rank {rank} of 2 failed while comparing the data, batch size, ' \
               f'steps and model of all ranks' in run.stderr
        assert f'rank {rank}: weights unchanged: True' in run.stdout
    assert run.stderr.count('ValueError: the ranks would train on different data or models '
                            '(rank 0: samples=64; rank 1: samples=60)') == 2


def test_models_that_differ_beyond_weight_shapes_are_refused():
    stderr = failed('activation')
    assert re.search(r'ValueError: the ranks would train on different data or models '
                     r'\(rank 0: architecture=[0-9a-f]{16}; rank 1: architecture=[0-9a-f]{16}\)',
                     stderr), stderr
