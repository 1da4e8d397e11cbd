"""Model averaging (``dist.ModelAveraging``) under mpirun, against synchronous data parallelism.

One launch of scripts/averaging_worker.py per number of ranks trains the
same model (batch normalization and dropout included) synchronously and
with model averaging, and reports every rank's weight digest, the bytes it
sent during fit and the number of averages.
"""

import math

import numpy as np
import pytest

from tests.minidl_dist.launch import launch, results

pytest.importorskip('mpi4py')

import minidl  # noqa: E402
import minidl_dist as dist  # noqa: E402
from minidl.layers import BatchNormalization, Dense  # noqa: E402
from minidl.models import Sequential  # noqa: E402
from minidl.optimizers import SGD  # noqa: E402

EPOCHS, STEPS = 3, 4  # the worker's 102 samples in global batches of 32, 32, 32 and 6
# Elements averaged: trainable weights (Dense 12x16 + 16, BatchNormalization gamma and
# beta 2 x 16, Dense 16x3 + 3), moving statistics (2 x 16), then the optimizer's slots.
TRAINABLE = 12 * 16 + 16 + 2 * 16 + 16 * 3 + 3
AVERAGED = {'average_sgd_1': TRAINABLE + 32, 'average_momentum_1': 2 * TRAINABLE + 32,
            'average_sgd_3': TRAINABLE + 32, 'average_adam_3': 3 * TRAINABLE + 32}
TOTALS = 2  # float64 loss sum and sample count, summed over the ranks at every step
# period=1 against synchronous training: the update w - lr * sum_r(g_r) against
# mean_r(w - lr * N g_r) rounds differently (a few float32 ulps of weights of order 1
# per step); over 12 steps the measured difference is at most 8e-7. A period-3 run
# differs by 6e-3, so the bound does tell the two apart.
TOLERANCE = 1e-5


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """The worker's reports (one per rank) for 2 and 4 ranks, launched once each."""
    cache = {}

    def run(ranks):
        if ranks not in cache:
            directory = tmp_path_factory.mktemp(f'averaging{ranks}')
            launch('averaging_worker.py', directory, ranks=ranks).check()
            cache[ranks] = directory, results(directory, ranks)
        return cache[ranks]
    return run


def halving_doubling_bytes(count, itemsize, rank, size):
    """Bytes a rank sends in the Reducer's allreduce of ``count`` items (power-of-two size).

    Recursive halving: at distance 1, 2, 4, ... the lower rank of a pair keeps
    the lower half of its range and sends the other half; recursive doubling
    then sends back, level by level, each range it kept.
    """
    low, high, sent, distance = 0, count, 0, 1
    while distance < size:
        middle = low + (high - low) // 2
        keep, give = ((middle, high), (low, middle)) if rank & distance else \
            ((low, middle), (middle, high))
        sent += (give[1] - give[0]) + (keep[1] - keep[0])
        low, high = keep
        distance <<= 1
    return sent * itemsize


@pytest.mark.parametrize('ranks', [2, 4])
def test_period_1_sgd_equals_synchronous_data_parallel(runs, ranks):
    directory, outputs = runs(ranks)
    for sync, average in (('sync_sgd', 'average_sgd_1'),
                          ('sync_momentum', 'average_momentum_1')):
        expected, got = np.load(directory / f'{sync}.npz'), np.load(directory / f'{average}.npz')
        for name in expected:
            np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=TOLERANCE)
        assert outputs[0][average]['loss'] == pytest.approx(outputs[0][sync]['loss'], rel=1e-5)
    stale = np.load(directory / 'average_sgd_3.npz')
    expected = np.load(directory / 'sync_sgd.npz')
    assert max(np.abs(stale[name] - expected[name]).max() for name in expected) > 100 * TOLERANCE


@pytest.mark.parametrize('ranks', [2, 4])
def test_after_fit_every_rank_holds_the_same_weights_and_optimizer_state(runs, ranks):
    _, outputs = runs(ranks)
    for configuration in AVERAGED:
        assert len({output[configuration]['digest'] for output in outputs}) == 1, configuration
        assert len({tuple(output[configuration]['loss']) for output in outputs}) == 1


def test_two_runs_give_the_same_bits(runs, tmp_path):
    _, first = runs(2)
    launch('averaging_worker.py', tmp_path, ranks=2).check()
    second = results(tmp_path, 2)
    for configuration in AVERAGED:
        for before, again in zip(first, second):
            assert again[configuration]['digest'] == before[configuration]['digest']
            assert again[configuration]['loss'] == before[configuration]['loss']


@pytest.mark.parametrize('ranks', [2, 4])
def test_traffic_is_one_allreduce_of_the_model_per_average(runs, ranks):
    _, outputs = runs(ranks)
    for rank, output in enumerate(outputs):
        for configuration, count in AVERAGED.items():
            period = int(configuration.rsplit('_', 1)[1])
            averages = EPOCHS * math.ceil(STEPS / period)  # every period steps, and at epoch end
            assert output[configuration]['averages'] == averages
            expected = averages * halving_doubling_bytes(count, 4, rank, ranks) + \
                EPOCHS * STEPS * halving_doubling_bytes(TOTALS, 8, rank, ranks)
            assert output[configuration]['bytes'] == expected, (configuration, rank)
        per_step = EPOCHS * STEPS * halving_doubling_bytes(TOTALS, 8, rank, ranks)
        every_step = output['average_sgd_1']['bytes'] - per_step
        every_third = output['average_sgd_3']['bytes'] - per_step
        assert every_third * 2 == every_step  # 2 averages per epoch of 4 steps instead of 4


@pytest.mark.parametrize('period', [0, -1, 1.5, True, '2', None])
def test_a_bad_period_is_refused(period):
    with pytest.raises(ValueError, match='period must be a positive integer'):
        dist.ModelAveraging(SGD(0.1), period=period)


def test_on_one_process_model_averaging_is_plain_training():
    dist.init()  # a job of size 1: averaging a single model changes no bit
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 5)).astype('float32')
    y = (x[:, :1] > 0).astype('float32')
    finals = []
    for optimizer in (SGD(0.1, momentum=0.9),
                      dist.ModelAveraging(SGD(0.1, momentum=0.9), period=2)):
        minidl.set_seed(1)
        model = Sequential([Dense(4, activation='tanh', input_shape=(5,)),
                            BatchNormalization(), Dense(1, activation='sigmoid')])
        initial = model.get_weights()
        model.compile(optimizer, 'binary_crossentropy')
        model.fit(x, y, batch_size=16, epochs=2, verbose=0)
        finals.append(model.get_weights() + optimizer.get_weights())
    assert optimizer.strategy.averages == 2 * 2  # 3 steps per epoch: after step 2 and at the end
    assert not np.array_equal(finals[0][0], initial[0])
    for plain, averaged in zip(*finals):
        assert np.array_equal(plain, averaged)
