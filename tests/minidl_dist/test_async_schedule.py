"""Asynchronous SGD's bookkeeping and seeded orders (no mpirun), and AsyncOptimizer's checks."""

import numpy as np
import pytest

from minidl_dist.async_schedule import Clocks, epoch_rng, seeded_order


def leads(order, workers, staleness):
    """Replay ``order`` with an independent reading of the stale-synchronous rule.

    Returns the lead (own clock minus the slowest clock) of every worker at
    the moment it was let go, and raises if the order asks a worker for a
    gradient while it waits for weights.
    """
    done, waiting, seen = [0] * workers, set(), []
    for worker in order:
        assert worker not in waiting, f'worker {worker} scheduled while held'
        done[worker] += 1
        waiting.add(worker)
        for other in sorted(waiting):
            if done[other] - min(done) <= staleness:
                waiting.discard(other)
                seen.append(done[other] - min(done))
    return seen


@pytest.mark.parametrize('workers, steps', [(1, 5), (2, 7), (3, 10)])
def test_asynchronous_order_is_a_permutation_per_round(workers, steps):
    order = seeded_order(np.random.default_rng(0), workers, steps)
    assert len(order) == workers * steps
    for start in range(0, len(order), workers):
        assert sorted(order[start:start + workers]) == list(range(workers))


@pytest.mark.parametrize('staleness', [0, 1, 2, 4])
def test_stale_order_respects_and_reaches_the_bound(staleness):
    reached = 0
    for seed in range(20):
        order = seeded_order(np.random.default_rng(seed), 3, 30, staleness)
        assert [order.count(worker) for worker in range(3)] == [30, 30, 30]
        seen = leads(order, 3, staleness)
        assert max(seen) <= staleness
        reached = max(reached, max(seen))
    assert reached == staleness  # uniform draws do run ahead as far as the bound lets them


def test_staleness_zero_is_lock_step_rounds():
    order = seeded_order(np.random.default_rng(5), 3, 8, 0)
    for start in range(0, len(order), 3):
        assert sorted(order[start:start + 3]) == [0, 1, 2]


def test_the_seed_fixes_the_order():
    for staleness in (None, 1):
        same = [seeded_order(epoch_rng(9, 40), 3, 12, staleness) for _ in range(2)]
        assert same[0] == same[1]
        assert seeded_order(epoch_rng(10, 40), 3, 12, staleness) != same[0]
        assert seeded_order(epoch_rng(9, 76), 3, 12, staleness) != same[0]  # next epoch


def test_clocks_hold_a_worker_too_far_ahead_until_the_slowest_catches_up():
    clocks = Clocks(2, staleness=1)
    clocks.applied(0)
    assert clocks.release() == [0]  # 1 ahead: allowed
    clocks.applied(0)
    assert clocks.release() == []  # 2 ahead: held
    assert clocks.running(steps=5) == [1]
    clocks.applied(1)
    assert clocks.release() == [0, 1]
    assert clocks.max_lead == 1
    with pytest.raises(RuntimeError, match='before it got weights'):
        clocks.applied(1)
        clocks.applied(1)


def test_asynchronous_clocks_never_hold():
    clocks = Clocks(2)
    for _ in range(5):
        clocks.applied(0)
        assert clocks.release() == [0]
    assert clocks.max_lead == 5


@pytest.mark.parametrize('staleness', [-1, True])
def test_a_bad_bound_is_refused(staleness):
    with pytest.raises(ValueError, match='staleness'):
        Clocks(2, staleness)


@pytest.mark.parametrize('options, message', [
    ({'mode': 'sync'}, "mode must be 'async' or 'stale'"),
    ({'mode': 'stale'}, 'needs staleness'),
    ({'mode': 'stale', 'staleness': -1}, 'needs staleness'),
    ({'mode': 'async', 'staleness': 2}, 'no staleness bound'),
    ({'schedule': 'random'}, "schedule must be 'free' or 'seeded'"),
    ({'schedule': 'seeded', 'seed': 1.5}, 'seed must be'),
    ({}, 'at least 2 ranks'),
])
def test_async_optimizer_refuses_bad_options(options, message):
    dist = pytest.importorskip('minidl_dist')
    from minidl.optimizers import SGD
    dist.init()  # one process: a job of size 1, which has no worker
    with pytest.raises(ValueError, match=message):
        dist.AsyncOptimizer(SGD(0.1), **options)
