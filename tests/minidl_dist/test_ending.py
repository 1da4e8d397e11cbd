"""Every way a rank can end, before or after ``dist.init()``, ends the job in seconds.

Each case runs ``scripts/ending_worker.py`` through the launcher
(``mpirun -np 2 python -m minidl_dist``): rank 1 ends as the case says while
rank 0 goes on into collectives that need it. The job must end with a
non-zero status within 10 s, with a message naming the rank and what
happened; a handled exception and a job whose ranks all end normally must
exit 0.
"""

import re

import pytest

from tests.minidl_dist.launch import launch

LIMIT = 10  # seconds the issue allows for the whole job to end


def activity(when):
    """What rank 1 was doing when it ended, in the messages."""
    return 'running the script' if when == 'before' else 'step 2 of the test loop'


def ended(case, when, ranks=2, who=1):
    """Run the case; check that the job failed fast; return its stdout and stderr."""
    run = launch('ending_worker.py', case, when, who, ranks=ranks, timeout=60, launcher=True)
    assert run.returncode != 0, (run.stdout, run.stderr)
    assert run.seconds < LIMIT, (run.seconds, run.stderr)
    assert 'done' not in run.stdout  # no rank got to the end
    return run


WHENS = pytest.mark.parametrize('when', ['before', 'after'])


@WHENS
def test_an_exception_aborts_the_job(when):
    run = ended('raise', when)
    assert f'minidl_dist: rank 1 of 2 failed while {activity(when)}:\n' in run.stderr
    # The error, then the abort; another rank's line may come between (rank 0 prints
    # which process is which rank as it starts, while rank 1 may already fail).
    cause = run.stderr.index('RuntimeError: simulated failure\n')
    assert run.stderr.index('minidl_dist: aborting all 2 ranks', cause) > cause
    assert 'runpy' not in run.stderr  # the traceback starts at the script, as Python's does


@WHENS
def test_an_import_error_aborts_the_job(when):
    run = ended('import', when)
    assert f'minidl_dist: rank 1 of 2 failed while {activity(when)}:\n' in run.stderr
    assert "ModuleNotFoundError: No module named 'minidl_dist_no_such_module'" in run.stderr


@WHENS
@pytest.mark.parametrize('case, status', [('exit', 3), ('systemexit', 4)])
def test_sys_exit_and_raise_system_exit_abort_the_job_with_their_status(case, status, when):
    run = ended(case, when)
    assert run.returncode == status
    assert f'minidl_dist: rank 1 of 2 exited with status {status} (SystemExit({status})) ' \
           f'while {activity(when)}\n' in run.stderr


@WHENS
def test_os_exit_aborts_the_job_with_its_status(when):
    run = ended('os_exit', when)
    assert run.returncode == 5
    assert f'minidl_dist: rank 1 of 2 called os._exit(5) while {activity(when)}\n' in run.stderr


@WHENS
def test_sigkill_ends_the_job_and_the_rank_map_names_the_rank(when):
    run = ended('kill', when)
    output = run.stdout + run.stderr
    # The launcher prints the map before the script runs; mpirun names the dead pid.
    ranks = dict(re.findall(r'rank (\d) = pid (\d+) on ', output))
    dead = re.search(r'PID (\d+) RUNNING AT .*\n.*EXIT CODE: 9', output)
    assert dead is not None, output
    assert ranks['1'] == dead.group(1) != ranks['0']


@WHENS
def test_an_early_exit_0_aborts_the_job_naming_the_rank_that_left(when):
    run = ended('early', when)
    collectives = 2 if when == 'before' else 4  # the launcher's 2, init's 1, step 1's sum
    waited = 'finding the ranks on each host' if when == 'before' else \
        'a sum over ranks of 3 values'
    assert f'minidl_dist: rank 1 of 2 exited with status 0 (SystemExit(0)) after ' \
           f'{collectives} collectives; rank 0 ({activity(when)}) still waits for it in ' \
           f"'{waited}' (collective {collectives + 1}): an early end" in run.stderr


def test_an_early_exit_on_one_of_4_ranks_aborts_the_job():
    run = ended('early', 'after', ranks=4, who=2)
    found = re.findall(r"minidl_dist: rank 2 of 4 exited with status 0 \(SystemExit\(0\)\) "
                       r"after 4 collectives; rank (\d) \(step 2 of the test loop\) still waits",
                       run.stderr)
    assert found and set(found) <= {'0', '1', '3'}, run.stderr


def test_an_exception_on_one_of_4_ranks_before_init_aborts_the_job():
    run = ended('raise', 'before', ranks=4, who=3)
    assert 'minidl_dist: rank 3 of 4 failed while running the script:\n' in run.stderr


@WHENS
@pytest.mark.parametrize('case', ['handled', 'none'])
def test_a_handled_exception_or_no_failure_lets_the_job_end_normally(case, when):
    run = launch('ending_worker.py', case, when, ranks=2, timeout=60, launcher=True).check()
    assert run.seconds < LIMIT
    assert 'rank 0: done' in run.stdout and 'rank 1: done' in run.stdout
    assert ('handled: simulated failure, handled' in run.stdout) == (case == 'handled')
    assert 'aborting' not in run.stderr


def test_ranks_that_end_wait_for_one_working_alone_then_the_job_exits_0():
    run = launch('ending_worker.py', 'linger', 'after', 0, ranks=2, timeout=60,
                 launcher=True).check()
    assert 'rank 0: done' in run.stdout and 'rank 1: done' in run.stdout
    assert 'aborting' not in run.stderr


def test_the_wait_at_the_end_has_the_collective_timeout():
    run = launch('ending_worker.py', 'linger', 'after', 0, ranks=2, timeout=60,
                 launcher=True, env={'MINIDL_DIST_TIMEOUT': '0.5'})
    assert run.returncode != 0 and run.seconds < LIMIT
    assert re.search(r'minidl_dist: rank 1 of 2 reached the end of its script and waited '
                     r'\d+\.\d s \(timeout 0\.5 s, MINIDL_DIST_TIMEOUT\) for the other ranks '
                     r'to end; rank\(s\) 0 did not', run.stderr), run.stderr
