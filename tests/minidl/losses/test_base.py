import numpy as np
import pytest

from minidl import losses
from minidl.tensor import Tensor

torch = pytest.importorskip('torch')
TF = torch.nn.functional


def logits(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def labels(*shape, classes=4, seed=1):
    return np.random.default_rng(seed).integers(0, classes, size=shape)


def reduce_in_torch(per_sample, weights, reduction):
    weighted = per_sample * weights
    if reduction == 'none':
        return weighted
    return weighted.sum() if reduction == 'sum' else weighted.sum() / weighted.numel()


@pytest.mark.parametrize('reduction', ['auto', 'sum_over_batch_size', 'sum', 'none'])
def test_weighted_reductions_and_their_gradients_match_torch(reduction):
    z, y = logits(6, 4), labels(6)
    weights = np.random.default_rng(2).uniform(0, 2, size=6)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, reduction=reduction)
    prediction = Tensor(z, dtype='float64', requires_grad=True)
    value = loss(y, prediction, sample_weight=weights)
    upstream = np.random.default_rng(3).standard_normal(value.shape)
    value.backward(upstream)
    torch_z = torch.tensor(z, requires_grad=True)
    expected = reduce_in_torch(TF.cross_entropy(torch_z, torch.tensor(y), reduction='none'),
                               torch.tensor(weights), 'sum_over_batch_size'
                               if reduction == 'auto' else reduction)
    expected.backward(torch.tensor(upstream))
    assert value.shape == tuple(expected.shape)
    np.testing.assert_allclose(value.numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(prediction.grad.numpy(), torch_z.grad.numpy(), rtol=1e-12)


def test_sum_over_batch_size_divides_by_the_number_of_losses_not_the_weights():
    value = losses.MeanSquaredError()(np.zeros((4, 1)), np.ones((4, 1)), sample_weight=[1, 0, 0, 0])
    assert value.item() == pytest.approx(0.25)


@pytest.mark.parametrize('weight_shape', [(), (3,), (3, 1), (3, 5)])
def test_weights_broadcast_from_the_sample_axis_over_sequence_losses(weight_shape):
    y, z = labels(3, 5), logits(3, 5, 4)
    weights = np.random.default_rng(4).uniform(0, 2, size=weight_shape)
    per_sample = losses.sparse_categorical_crossentropy(y, z, from_logits=True).numpy()
    full = weights.reshape(weights.shape + (1,) * (2 - weights.ndim))
    expected = (per_sample * np.broadcast_to(full, (3, 5))).sum() / 15
    value = losses.SparseCategoricalCrossentropy(from_logits=True)(y, z, sample_weight=weights)
    assert value.item() == pytest.approx(expected, rel=1e-6)


def test_per_sample_is_the_unweighted_unreduced_loss():
    z, y = logits(5, 3), labels(5, classes=3)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, reduction='sum')
    np.testing.assert_array_equal(
        loss.per_sample(y, z).numpy(),
        losses.sparse_categorical_crossentropy(y, z, from_logits=True).numpy())


def test_custom_loss_subclass_defines_call():
    class Doubled(losses.Loss):
        def call(self, y_true, y_pred):
            return 2 * losses.mae(y_true, y_pred)

    loss = Doubled(reduction='sum')
    assert loss.name == 'doubled'
    assert loss(np.zeros((2, 2)), np.ones((2, 2))).item() == pytest.approx(4.0)


def test_empty_batch_reduces_to_zero():
    value = losses.MeanSquaredError()(np.zeros((0, 3)), np.zeros((0, 3)))
    assert value.item() == 0.0


def test_bad_reduction_and_weights_are_rejected():
    with pytest.raises(ValueError, match="reduction must be one of.*'mean'"):
        losses.MeanSquaredError(reduction='mean')
    with pytest.raises(ValueError, match=r'sample_weight of shape \(4,\).*losses of shape \(3,\)'):
        losses.MeanSquaredError()(np.zeros((3, 2)), np.zeros((3, 2)), sample_weight=np.ones(4))
    with pytest.raises(ValueError, match='reduction must be one of'):
        losses.compute_weighted_loss(Tensor([1.0]), reduction='avg')
    with pytest.raises(TypeError, match='callable'):
        losses.LossFunctionWrapper('mse')
