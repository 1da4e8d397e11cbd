"""LearningRateWarmup (no mpirun): the rate at every batch against a hand-computed schedule.

With initial rate 0.1, scale 4 and a warm-up of 2 epochs of 4 batches, the
rate of batch b of epoch e is 0.1 * (1 + 3 * (e + (b + 1) / 4) / 2):
0.1375, 0.175, 0.2125, 0.25, then 0.2875, 0.325, 0.3625, 0.4, and the
callback leaves 0.4 alone afterwards.
"""

import numpy as np
import pytest

pytest.importorskip('mpi4py')  # importing minidl_dist imports it

import minidl  # noqa: E402
import minidl_dist as dist  # noqa: E402
from minidl.callbacks import LambdaCallback, LearningRateScheduler  # noqa: E402
from minidl.layers import Dense  # noqa: E402
from minidl.models import Sequential  # noqa: E402
from minidl.optimizers import SGD  # noqa: E402
from minidl_dist.callbacks import LearningRateWarmup  # noqa: E402

SCHEDULE = [0.1375, 0.175, 0.2125, 0.25, 0.2875, 0.325, 0.3625, 0.4]


def model_with(optimizer):
    minidl.set_seed(0)
    model = Sequential([Dense(1, input_shape=(3,))])
    model.compile(optimizer, 'mse')
    return model


def rates_of(model, warmup, samples=32, batch_size=8, epochs=3, initial_epoch=0, before=()):
    """The rate each training batch runs with, read after every callback's batch hook."""
    x = np.random.default_rng(0).normal(size=(samples, 3)).astype(np.float32)
    rates = []
    record = LambdaCallback(
        on_batch_begin=lambda batch, logs: rates.append(model.optimizer.learning_rate))
    model.fit(x, x[:, :1], batch_size=batch_size, epochs=epochs, initial_epoch=initial_epoch,
              verbose=0, shuffle=False, callbacks=[*before, warmup, record])
    return rates


def test_the_rate_climbs_per_batch_to_scale_times_the_initial_rate():
    model = model_with(SGD(0.1))
    rates = rates_of(model, LearningRateWarmup(warmup_epochs=2, scale=4))
    assert rates == pytest.approx(SCHEDULE + [0.4] * 4, rel=1e-12)


def test_after_the_warm_up_other_schedules_set_the_rate():
    model = model_with(SGD(0.1))
    halve = LearningRateScheduler(lambda epoch, lr: lr / 2 if epoch == 2 else lr)
    rates = rates_of(model, LearningRateWarmup(2, scale=4), before=[halve])
    assert rates == pytest.approx(SCHEDULE + [0.2] * 4, rel=1e-12)


def test_steps_per_epoch_and_a_fractional_warm_up():
    # Given 5 steps per epoch, though fit runs 4: the climb counts fifths of an epoch.
    # warm-up 1.5 epochs, scale 3: 0.1 * (1 + 2 * min(1, (e + (b + 1) / 5) / 1.5)).
    rates = rates_of(model_with(SGD(0.1)), LearningRateWarmup(1.5, scale=3, steps_per_epoch=5))
    expected = [0.1 * (1 + 2 * min(1, (e + (b + 1) / 5) / 1.5)) for e in (0, 1) for b in range(4)]
    assert expected[:4] == pytest.approx([0.12666666666666667, 0.15333333333333332, 0.18,
                                          0.20666666666666667], rel=1e-12)
    assert rates == pytest.approx(expected + [expected[-1]] * 4, rel=1e-12)
    assert expected[-1] == pytest.approx(0.3)  # 1 + 4/5 epochs is past 1.5: the full rate


def test_resuming_inside_the_warm_up_continues_the_schedule():
    model = model_with(SGD(0.1))
    rates_of(model, LearningRateWarmup(2, scale=4), epochs=1)
    assert model.optimizer.learning_rate == pytest.approx(0.25)
    resumed = rates_of(model, LearningRateWarmup(2, initial_lr=0.1, scale=4), initial_epoch=1)
    assert resumed == pytest.approx(SCHEDULE[4:] + [0.4] * 4, rel=1e-12)
    # Without initial_lr the callback would take the climb's 0.4 for the initial rate.
    with pytest.raises(ValueError, match='give initial_lr'):
        rates_of(model_with(SGD(0.25)), LearningRateWarmup(2, scale=4), initial_epoch=1)


def test_resuming_after_the_warm_up_leaves_the_rate_alone():
    rates = rates_of(model_with(SGD(0.4)), LearningRateWarmup(2, scale=4), initial_epoch=2)
    assert rates == [0.4] * 4


def test_a_second_fit_warms_up_from_the_first_fits_rate():
    model = model_with(SGD(0.1))
    warmup = LearningRateWarmup(2, scale=4)
    rates_of(model, warmup)
    assert rates_of(model, warmup) == pytest.approx(SCHEDULE + [0.4] * 4, rel=1e-12)


def test_the_scale_is_the_number_of_ranks():
    # Without minidl_dist the model trains alone: scale 1, the rate stays put.
    assert rates_of(model_with(SGD(0.1)), LearningRateWarmup(2)) == [0.1] * 12
    dist.init()  # one process: a job of one rank
    model = model_with(dist.DistributedOptimizer(SGD(0.1)))
    assert rates_of(model, LearningRateWarmup(2)) == [0.1] * 12
    assert model.strategy.size == 1


@pytest.mark.parametrize('arguments', [{'warmup_epochs': 0}, {'warmup_epochs': None},
                                       {'initial_lr': -1.0}, {'scale': float('inf')},
                                       {'steps_per_epoch': True}, {'scale': '2'}])
def test_bad_arguments_are_refused(arguments):
    with pytest.raises(ValueError, match='must be a positive number'):
        LearningRateWarmup(**arguments)


def test_verbose_says_when_the_warm_up_ends(capsys):
    rates_of(model_with(SGD(0.1)), LearningRateWarmup(2, scale=4, verbose=1))
    assert capsys.readouterr().out.count('LearningRateWarmup reached the learning rate 0.4') == 1
