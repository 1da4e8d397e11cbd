"""Learning-rate schedules: values at chosen steps, configs, errors."""

import math

import pytest

from minidl.optimizers import schedules


def test_exponential_decay_values():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    assert schedule(0) == pytest.approx(0.1)
    assert schedule(5) == pytest.approx(0.1 * math.sqrt(0.5))
    assert schedule(20) == pytest.approx(0.025)


def test_exponential_decay_staircase_changes_in_steps():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    assert [schedule(step) for step in (0, 9, 10, 19, 25)] == pytest.approx(
        [0.1, 0.1, 0.05, 0.05, 0.025])


def test_piecewise_constant_decay_takes_the_left_value_on_a_boundary():
    schedule = schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    assert [schedule(step) for step in (0, 10, 11, 20, 21, 1000)] == [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]


def test_cosine_decay_values():
    schedule = schedules.CosineDecay(1.0, decay_steps=100, alpha=0.1)
    assert schedule(0) == pytest.approx(1.0)
    assert schedule(50) == pytest.approx(0.55)
    assert schedule(25) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.sqrt(0.5)))
    assert schedule(100) == pytest.approx(0.1)
    assert schedule(250) == pytest.approx(0.1)  # stays at the floor
    assert schedules.CosineDecay(2.0, 10)(10) == pytest.approx(0.0)


@pytest.mark.parametrize('schedule', [
    schedules.ExponentialDecay(0.1, 7, 0.9, staircase=True, name='exp'),
    schedules.PiecewiseConstantDecay([3, 8], [0.3, 0.2, 0.1]),
    schedules.CosineDecay(0.5, 40, alpha=0.2),
])
def test_configs_round_trip(schedule):
    config = schedules.serialize(schedule)
    assert config['class_name'] == type(schedule).__name__
    rebuilt = schedules.get(config)
    assert type(rebuilt) is type(schedule) and rebuilt.get_config() == schedule.get_config()
    assert ([rebuilt(step) for step in range(0, 50, 3)]
            == [schedule(step) for step in range(0, 50, 3)])
    assert schedules.get(schedule) is schedule


def test_keras_config_keys():
    assert set(schedules.ExponentialDecay(0.1, 10, 0.9).get_config()) == {
        'initial_learning_rate', 'decay_steps', 'decay_rate', 'staircase', 'name'}
    assert set(schedules.PiecewiseConstantDecay([1], [1.0, 0.5]).get_config()) == {
        'boundaries', 'values', 'name'}
    assert set(schedules.CosineDecay(0.1, 10).get_config()) == {
        'initial_learning_rate', 'decay_steps', 'alpha', 'name'}


def test_errors():
    with pytest.raises(ValueError, match='one more'):
        schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5])
    with pytest.raises(ValueError, match='increasing'):
        schedules.PiecewiseConstantDecay([20, 10], [1.0, 0.5, 0.1])
    with pytest.raises(ValueError, match='decay_steps'):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match='unknown learning-rate schedule'):
        schedules.deserialize({'class_name': 'Nope', 'config': {}})
    with pytest.raises(TypeError):
        schedules.get(0.1)


def test_custom_schedules_deserialize_through_custom_objects():
    class Halving(schedules.LearningRateSchedule):
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, step):
            return self.rate / 2 ** step

        def get_config(self):
            return {'rate': self.rate}

    rebuilt = schedules.deserialize(schedules.serialize(Halving(0.8)), {'Halving': Halving})
    assert rebuilt(2) == 0.2
