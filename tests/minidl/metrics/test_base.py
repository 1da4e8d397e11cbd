import numpy as np
import pytest

import minidl.functions as F
from minidl import metrics
from minidl.tensor import Tensor


def batches(values, weights, sizes):
    start = 0
    for size in sizes:
        yield values[start:start + size], weights[start:start + size]
        start += size


def test_mean_over_weighted_batches_equals_the_whole_set():
    rng = np.random.default_rng(0)
    values, weights = rng.standard_normal(10).astype(np.float32), rng.uniform(0, 2, size=10)
    metric = metrics.Mean()
    for batch, weight in batches(values, weights, [3, 4, 3]):
        metric.update_state(Tensor(batch), sample_weight=weight)
    assert metric.result() == pytest.approx(np.average(values, weights=weights), rel=1e-12)
    assert isinstance(metric.result(), float)


def test_unweighted_mean_and_sum():
    mean, total = metrics.Mean(), metrics.Sum()
    for values in ([1.0, 2.0], [6.0], 3.0):
        mean.update_state(values)
        total.update_state(values)
    assert mean.result() == 3.0 and total.result() == 12.0
    total.update_state([1.0, 1.0], sample_weight=[0.5, 2.0])
    assert total.result() == 14.5


def test_sample_weights_broadcast_over_the_elements_of_each_sample():
    values = np.arange(6.0).reshape(2, 3)
    for weights in ([1.0, 3.0], [[1.0], [3.0]]):
        metric = metrics.Mean()
        metric.update_state(values, sample_weight=weights)
        expected = np.average(values, weights=np.broadcast_to([[1.0], [3.0]], (2, 3)))
        assert metric.result() == pytest.approx(expected)
        np.testing.assert_allclose(metric.totals, [0 + 1 + 2 + 3 * (3 + 4 + 5), 3 * 4.0])


def test_totals_round_trip_and_add_up_across_shards():
    values = np.random.default_rng(1).standard_normal(8)
    weights = np.random.default_rng(2).uniform(0, 1, size=8)
    whole, first, second = metrics.Mean(), metrics.Mean(), metrics.Mean()
    whole.update_state(values, weights)
    first.update_state(values[:5], weights[:5])
    second.update_state(values[5:], weights[5:])
    assert first.totals.dtype == np.float64 and first.totals.shape == (2,)
    summed = first.totals + second.totals
    assert first.result_of(summed) == pytest.approx(whole.result(), rel=1e-14)
    first.totals = summed
    assert first.result() == first.result_of(first.totals)
    first.set_totals([1.0, 4.0])
    assert first.result() == 0.25
    with pytest.raises(ValueError, match=r'totals must have shape \(2,\), got \(3,\)'):
        first.set_totals([1.0, 2.0, 3.0])


def test_bad_weights_leave_the_state_unchanged():
    metric = metrics.Mean()
    metric.update_state([1.0, 2.0])
    with pytest.raises(ValueError, match=r'sample_weight of shape \(3,\).*values of shape \(2,\)'):
        metric.update_state([5.0, 6.0], sample_weight=[1.0, 1.0, 1.0])
    np.testing.assert_array_equal(metric.totals, [3.0, 2.0])


def test_reset_call_and_empty_result():
    metric = metrics.Mean(name='loss')
    assert metric.result() == 0.0
    assert metric([2.0, 4.0]) == 3.0
    assert metric([6.0]) == 4.0
    metric.reset_state()
    assert metric.result() == 0.0 and metric.totals.tolist() == [0.0, 0.0]
    metric.update_state([1.0])
    metric.reset_states()
    assert metric.result() == 0.0


def test_mean_metric_wrapper_records_no_graph():
    outputs = []

    def doubled(y_true, y_pred, scale):
        outputs.append(F.mul(y_pred, scale) - y_true)
        return outputs[-1]

    prediction = Tensor([[1.0], [2.0]], requires_grad=True)
    metric = metrics.MeanMetricWrapper(doubled, scale=2.0)
    metric.update_state(np.zeros((2, 1)), prediction, sample_weight=[1.0, 3.0])
    assert metric.name == 'doubled'
    assert not outputs[0].requires_grad and outputs[0].creator is None
    assert metric.result() == pytest.approx((2 * 1 + 4 * 3) / 4)


def test_config_round_trip():
    metric = metrics.Mean(name='m', dtype='float64')
    assert metric.get_config() == {'name': 'm', 'dtype': 'float64'}
    assert metrics.Mean.from_config(metric.get_config()).get_config() == metric.get_config()
    assert metrics.Sum().name == 'sum' and metrics.Mean().dtype == 'float32'
    with pytest.raises(TypeError, match='callable'):
        metrics.MeanMetricWrapper('mse')
