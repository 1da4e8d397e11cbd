"""Network faults across 2 fake hosts (conftest.py), 2 ranks on each: the job ends, says where.

The worker trains in the invariant mode, writing a checkpoint after each
epoch; in the third epoch's second step its last rank (on the second host)
stops while the other ranks go on into the gradient sum, and the test makes
the fault: it takes the second host's link down (then lets that rank go on
into the sum, across the dead link), or kills that host's ranks. The job
must end within the collective timeout, naming the host and the rank, leave
no process behind, and the checkpoint written before the fault must resume
to the bits of a run that never failed.
"""

import json
import os
import re
import signal
import subprocess
import time

import pytest

from tests.minidl_dist.launch import ROOT, Run, command_and_env, launch
from tests.minidl_dist.test_multihost import RANKS, rank_map

TIMEOUT = 5  # MINIDL_DIST_TIMEOUT of the runs with a fault, in seconds
EPOCHS, PAUSE = 4, (2, 1)  # the fault: epoch 3 (from 0: 2), its second step, after 2 checkpoints
STEP = 4 * 2 + 2  # 100 samples in global batches of 32: 4 steps an epoch
WORKER = 'multihost_worker.py'


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    """The weights' digest and losses of the run without a fault, in one process."""
    directory = tmp_path_factory.mktemp('reference')
    launch(WORKER, 'train', directory, EPOCHS).check()
    return _result(directory)


def _result(directory):
    return json.loads((directory / 'result.json').read_text())


def run_with_fault(hosts, output, fault):
    """Train across ``hosts``; when the last rank stops, call ``fault()`` and let it go on.

    Returns the job's :class:`Run`, its ``seconds`` counted from the fault.
    """
    command, env = command_and_env(WORKER, ['train', output, EPOCHS, *PAUSE], ranks=RANKS,
                                   env={'MINIDL_DIST_TIMEOUT': str(TIMEOUT)}, launcher=True,
                                   hosts=hosts)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not (output / 'paused').exists():
            if process.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        else:
            fault()
            faulted = time.monotonic()
            (output / 'go').touch()
            stdout, stderr = process.communicate(timeout=60)
            return Run(process.returncode, stdout, stderr, time.monotonic() - faulted)
    except subprocess.TimeoutExpired:
        pass
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
    stdout, stderr = process.communicate()
    pytest.fail(f'the job did not reach the fault, or did not end after it\n{stdout}\n{stderr}')


def assert_no_process_left(hosts, seconds=15):
    """Every rank and proxy on every host ends (those cut off by their own watchdogs)."""
    deadline = time.monotonic() + seconds
    while any(hosts.processes(name) for name in hosts.names):
        assert time.monotonic() < deadline, {name: hosts.processes(name) for name in hosts.names}
        time.sleep(0.1)


def checkpoints(output):
    return sorted(path.name for path in output.glob('checkpoint-*.h5'))


def test_a_link_down_mid_allreduce_ends_the_job_in_the_timeout_naming_host_and_rank(
        fresh_fake_hosts, tmp_path, reference):
    hosts = fresh_fake_hosts
    run = run_with_fault(hosts, tmp_path, lambda: hosts.set_link(1, up=False))
    assert run.returncode != 0
    # The ranks of the first host entered the sum before the fault: their watchdogs fire at
    # most TIMEOUT after it, then give mpirun 1 s to pass their message on.
    assert run.seconds < TIMEOUT + 3, run.stderr
    first, second = (re.escape(name) for name in hosts.names)
    reports = re.findall(rf"minidl_dist: rank ([01]) of 4 \(on {first}\) waited \d+\.\d s "
                         rf"\(timeout {TIMEOUT} s, MINIDL_DIST_TIMEOUT\) for the other ranks in "
                         rf"'a sum over ranks of \d+ values' while training step {STEP}, summing "
                         rf"gradients over ranks; rank ([23]) of 4 \(on {second}\), which it "
                         rf"was waiting for, did not join it", run.stderr)
    assert reports, run.stderr
    # Halving at distance 2: rank 0 waits for rank 2, rank 1 for rank 3.
    assert all(int(waited) == int(waiting) + 2 for waiting, waited in reports)
    assert_no_process_left(hosts)
    assert checkpoints(tmp_path) == ['checkpoint-01.h5', 'checkpoint-02.h5']
    # The link back up, the same hosts resume from the last checkpoint to the bits of a
    # run that never failed.
    hosts.set_link(1, up=True)
    resumed = tmp_path / 'resumed'
    resumed.mkdir()
    launch(WORKER, 'resume', resumed, EPOCHS, tmp_path / 'checkpoint-02.h5', 2, ranks=RANKS,
           hosts=hosts, launcher=True).check()
    assert _result(resumed)['digest'] == reference['digest']
    assert _result(resumed)['loss'] == reference['loss'][2:]


def test_a_hosts_ranks_killed_end_the_job_at_once_and_mpirun_names_host_and_rank(
        fresh_fake_hosts, tmp_path, reference):
    hosts = fresh_fake_hosts
    killed = []
    run = run_with_fault(hosts, tmp_path, lambda: killed.extend(hosts.kill_ranks(1)))
    assert len(killed) == 2
    assert run.returncode != 0
    assert run.seconds < TIMEOUT, run.stderr  # mpirun ends the job; no rank waits it out
    # mpirun names the dead process by its pid and host; rank 0's map names its rank.
    dead = re.search(r'PID (\d+) RUNNING AT (\S+)\n.*EXIT CODE: 9', run.stdout + run.stderr)
    assert dead is not None, run.stdout + run.stderr
    pid, host = int(dead.group(1)), dead.group(2)
    assert pid in killed and host == hosts.names[1]
    ranks = {pid: (rank, host) for rank, (pid, host) in rank_map(run.stderr).items()}
    assert ranks[pid] in [(2, hosts.names[1]), (3, hosts.names[1])]
    assert_no_process_left(hosts)
    assert checkpoints(tmp_path) == ['checkpoint-01.h5', 'checkpoint-02.h5']
    # Resumed on one process (the invariant mode's bits do not depend on the rank count).
    resumed = tmp_path / 'resumed'
    resumed.mkdir()
    launch(WORKER, 'resume', resumed, EPOCHS, tmp_path / 'checkpoint-02.h5', 2).check()
    assert _result(resumed)['digest'] == reference['digest']
