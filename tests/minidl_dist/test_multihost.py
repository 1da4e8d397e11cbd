"""minidl_dist across 2 hosts, 2 ranks on each, over TCP (the fake hosts of conftest.py).

The hosts are network namespaces joined by a link (minidl_dist.fakehosts):
their ranks share no memory and reach each other only through their
interfaces. The references are the same workers on one process or on one
host with the same number of ranks; the traffic formulas are the ones the
single-host tests check.
"""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.minidl_dist.launch import ROOT, launch, results, run_process
from tests.minidl_dist.test_averaging import AVERAGED, EPOCHS, STEPS, TOLERANCE, TOTALS, \
    halving_doubling_bytes

RANKS = 4
MIB = 1 << 20


def across(hosts, script, *args):
    """Run ``scripts/<script>`` under the launcher on ``hosts``, 2 ranks on each."""
    return launch(script, *args, ranks=RANKS, hosts=hosts, launcher=True).check()


def rank_map(stderr):
    """{rank: (pid, host)} from rank 0's start-up line."""
    line = re.search(r'minidl_dist: \d+ ranks: (.*)', stderr).group(1)
    return {int(rank): (int(pid), host)
            for rank, pid, host in re.findall(r'rank (\d+) = pid (\d+) on ([^,\s]+)', line)}


def test_ranks_know_their_hosts_and_sums_cross_the_link(fake_hosts, tmp_path):
    from minidl_dist.fakehosts.hosts import INTERFACE
    run = across(fake_hosts, 'multihost_worker.py', 'probe', tmp_path, INTERFACE)
    first, second = fake_hosts.names
    hosts = [first, first, second, second]
    named = {rank: host for rank, (_, host) in rank_map(run.stderr).items()}
    assert named == dict(enumerate(hosts))
    for rank, output in enumerate(results(tmp_path, RANKS)):
        assert output['host'] == hosts[rank]
        assert (output['local_rank'], output['local_size']) == (rank % 2, 2)
        assert output['sum_right']
        # test_allreduce's formula: each rank sends 2 (N - 1) / N of the buffer.
        assert output['bytes_sent_for_4092'] == 2 * (RANKS - 1) * 4092 * 4 // RANKS
        # Of a 4 MiB sum, each rank sends a quarter of the buffer to its partner on the other
        # host (distance 2) while halving, and a quarter back while doubling: each host's two
        # ranks put 4 MiB on their link (plus TCP's headers). Shared memory would put ~0.
        assert 4 * MIB <= output['link_bytes_for_4_mib'] <= 1.1 * 4 * MIB


def test_invariant_fit_gives_the_bits_of_one_process(fake_hosts, tmp_path):
    single, spread = tmp_path / 'single', tmp_path / 'spread'
    single.mkdir(), spread.mkdir()
    launch('fit_worker.py', 'invariant', single).check()
    across(fake_hosts, 'fit_worker.py', 'invariant', spread)
    expected = results(single, 1)[0]
    for output in results(spread, RANKS):
        assert output['digest'] == expected['digest']
        assert output['history']['loss'] == expected['history']['loss']
        # Evaluation runs on each rank's part of a batch: products on fewer rows may round
        # differently (test_fit's invariant test says the same).
        assert output['history']['val_loss'] == pytest.approx(expected['history']['val_loss'],
                                                               rel=1e-6)
    assert expected['history']['loss'][-1] < expected['history']['loss'][0]  # it trained


def test_plain_fit_gives_the_bits_of_one_host_with_as_many_ranks(fake_hosts, tmp_path):
    one_host, spread = tmp_path / 'one_host', tmp_path / 'spread'
    one_host.mkdir(), spread.mkdir()
    launch('fit_worker.py', 'plain', one_host, ranks=RANKS).check()
    across(fake_hosts, 'fit_worker.py', 'plain', spread)
    expected = results(one_host, RANKS)
    for rank, output in enumerate(results(spread, RANKS)):
        assert output == expected[rank]  # weights' digest, history, evaluate, predict
    mine, theirs = np.load(spread / 'weights.npz'), np.load(one_host / 'weights.npz')
    assert all(np.array_equal(mine[key], theirs[key]) for key in theirs)


def test_hybrid_runs_across_hosts_with_the_bits_of_one_process(fake_hosts, tmp_path):
    single, spread = tmp_path / 'single', tmp_path / 'spread'
    single.mkdir(), spread.mkdir()
    launch('hybrid_worker.py', 'invariant', single).check()
    across(fake_hosts, 'hybrid_worker.py', 'invariant', spread)
    expected = json.loads((single / 'invariant.json').read_text())
    assert json.loads((spread / 'invariant.json').read_text()) == expected
    assert expected['loss'][-1] < expected['loss'][0]


def test_model_averaging_runs_across_hosts_and_sends_what_the_formula_says(fake_hosts, tmp_path):
    across(fake_hosts, 'averaging_worker.py', tmp_path)
    outputs = results(tmp_path, RANKS)
    for rank, output in enumerate(outputs):
        for configuration, count in AVERAGED.items():
            assert output[configuration]['digest'] == outputs[0][configuration]['digest']
            period = int(configuration.rsplit('_', 1)[1])
            averages = EPOCHS * -(-STEPS // period)
            assert output[configuration]['averages'] == averages
            # test_averaging's formula: one allreduce of the model per average, the loss
            # totals at every step.
            assert output[configuration]['bytes'] == \
                averages * halving_doubling_bytes(count, 4, rank, RANKS) + \
                EPOCHS * STEPS * halving_doubling_bytes(TOTALS, 8, rank, RANKS)
    # As on one host: averaging after every step is synchronous SGD up to rounding.
    expected, got = np.load(tmp_path / 'sync_sgd.npz'), np.load(tmp_path / 'average_sgd_1.npz')
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=0, atol=TOLERANCE)


def test_the_fake_hosts_script_runs_a_job_over_new_hosts_and_removes_them(tmp_path):
    from minidl_dist.fakehosts import unavailable_reason
    if unavailable_reason():
        pytest.skip(f'fake hosts cannot be made here: {unavailable_reason()}')
    script = tmp_path / 'where.py'
    script.write_text('import socket\nimport minidl_dist as dist\ndist.init()\n'
                      "print(f'rank {dist.rank()} on {socket.gethostname()}', flush=True)\n")
    command = [sys.executable, '-m', 'minidl_dist.fakehosts', '-np', '4',
               sys.executable, '-m', 'minidl_dist', str(script)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    returncode, stdout, stderr = run_process(command, ROOT, env, 90)
    if returncode == 3 and 'fakehosts: cannot make the hosts here' in stderr:
        pytest.skip(stderr.strip())
    assert returncode == 0, stderr
    made = re.search(r'fakehosts: (\S+), (\S+) at 10\.213\.0\.1, 10\.213\.0\.2\n', stderr)
    assert made, stderr
    first, second = made.groups()
    # (mpirun forwards the ranks' output as it comes: lines of different ranks may mix.)
    said = sorted(re.findall(r'rank (\d) on (minidl-\d+-\d+-h\d+)', stdout))
    assert said == [('0', first), ('1', first), ('2', second), ('3', second)], stdout
    listing = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
    assert first not in listing and second not in listing
