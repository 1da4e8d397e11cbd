import numpy as np
import pytest

import minidl.functions as F
from minidl import losses
from minidl.tensor import Tensor
from tests.minidl.losses.torch_reference import compare_with_torch

torch = pytest.importorskip('torch')
TF = torch.nn.functional
EPS = 1e-7


def probabilities(*shape, seed=0):
    values = np.random.default_rng(seed).uniform(0.05, 1.0, size=shape)
    return values / values.sum(axis=-1, keepdims=True)


def logits(*shape, seed=0, scale=2.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def indices(*shape, classes, seed=1):
    return np.random.default_rng(seed).integers(0, classes, size=shape)


def one_hot(labels, classes):
    return np.eye(classes)[labels]


def with_recorded_logits(z, kind):
    """What minidl.activations returns: the activation, carrying its logits."""
    z = Tensor(z, dtype='float64', requires_grad=True)
    y = F.softmax(z) if kind == 'softmax' else F.sigmoid(z)
    y._keras_logits = (z, kind)
    return z, y


def keras_categorical(t, p):
    """Keras 2's formula: rescale to sum one, clip, cross-entropy."""
    p = (p / p.sum(-1, keepdim=True)).clamp(EPS, 1 - EPS)
    return -(t * p.log()).sum(-1)


def test_categorical_probabilities_match_keras_formula_and_torch_cross_entropy():
    p = probabilities(6, 5) * 1.3  # unnormalized: Keras rescales before clipping
    t = probabilities(6, 5, seed=2)
    value = compare_with_torch(torch, losses.categorical_crossentropy, keras_categorical, t, p)
    expected = TF.cross_entropy(torch.tensor(p / p.sum(-1, keepdims=True)).log(),
                                torch.tensor(t), reduction='none')
    np.testing.assert_allclose(value, expected.numpy(), rtol=1e-12)


def test_categorical_clips_probabilities_like_keras():
    p = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    t = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(losses.categorical_crossentropy(t, p).numpy(),
                               [-np.log(EPS)] * 2, rtol=1e-6)


def test_categorical_from_logits_matches_torch():
    z = logits(6, 5)
    t = probabilities(6, 5, seed=2)
    compare_with_torch(torch, lambda a, b: losses.categorical_crossentropy(a, b, from_logits=True),
                       lambda a, b: TF.cross_entropy(b, a, reduction='none'), t, z)


@pytest.mark.parametrize('smoothing', [0.1, 1.0])
def test_categorical_label_smoothing_matches_torch(smoothing):
    z, labels = logits(6, 5), indices(6, classes=5)
    compare_with_torch(
        torch, lambda a, b: losses.categorical_crossentropy(
            one_hot(a, 5), b, from_logits=True, label_smoothing=smoothing),
        lambda a, b: TF.cross_entropy(b, a, reduction='none', label_smoothing=smoothing),
        labels, z)


def fused_and_torch(loss, y_true, z, kind, torch_loss, torch_labels):
    """The loss through recorded logits, with the logits' gradient, and PyTorch's."""
    logits_tensor, y_pred = with_recorded_logits(z, kind)
    value = loss(y_true, y_pred)
    value.sum().backward()
    torch_z = torch.tensor(z, requires_grad=True)
    expected = torch_loss(torch_z, torch_labels)
    expected.sum().backward()
    np.testing.assert_allclose(value.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(logits_tensor.grad.numpy(), torch_z.grad.numpy(), rtol=1e-10,
                               atol=1e-12)
    return value.numpy(), y_pred


@pytest.mark.parametrize('scale', [1.0, 60.0])
def test_softmax_output_uses_its_logits(scale):
    z, labels = logits(8, 4, scale=scale), indices(8, classes=4)
    torch_loss = lambda x, t: TF.cross_entropy(x, t, reduction='none')  # noqa: E731
    fused, y_pred = fused_and_torch(losses.categorical_crossentropy, one_hot(labels, 4), z,
                                    'softmax', torch_loss, torch.tensor(labels))
    sparse, _ = fused_and_torch(losses.sparse_categorical_crossentropy, labels, z, 'softmax',
                                torch_loss, torch.tensor(labels))
    np.testing.assert_allclose(sparse, fused, rtol=1e-12)
    clipped = losses.categorical_crossentropy(one_hot(labels, 4), y_pred.detach()).numpy()
    if scale == 1.0:  # clipping does not bite: both paths agree
        np.testing.assert_allclose(clipped, fused, rtol=1e-10)
    else:  # the clipped path saturates at -log(1e-7); the logits path stays exact
        assert clipped.max() <= -np.log(EPS) + 1e-6 < fused.max()


def test_recorded_logits_of_another_kind_are_ignored():
    z = logits(4, 3, scale=50.0)
    _, y_pred = with_recorded_logits(z, 'softmax')
    y_pred._keras_logits = (y_pred._keras_logits[0], 'sigmoid')
    labels = one_hot(indices(4, classes=3), 3)
    np.testing.assert_allclose(losses.categorical_crossentropy(labels, y_pred).numpy(),
                               losses.categorical_crossentropy(labels, y_pred.detach()).numpy())


@pytest.mark.parametrize('label_shape', ['flat', 'trailing-1', 'float'])
def test_sparse_probabilities_match_keras_formula(label_shape):
    p, labels = probabilities(6, 5), indices(6, classes=5)
    given = {'flat': labels, 'trailing-1': labels[:, None],
             'float': labels.astype(np.float32)}[label_shape]
    value = compare_with_torch(
        torch, losses.sparse_categorical_crossentropy,
        lambda t, b: TF.cross_entropy(b.clamp(EPS, 1 - EPS).log(), torch.tensor(labels),
                                      reduction='none'), given, p)
    np.testing.assert_allclose(value, -np.log(p[np.arange(6), labels]), rtol=1e-12)


def test_sparse_and_one_hot_labels_give_the_same_loss():
    p, labels = probabilities(5, 4), indices(5, classes=4)
    np.testing.assert_allclose(losses.sparse_categorical_crossentropy(labels, p).numpy(),
                               losses.categorical_crossentropy(one_hot(labels, 4), p).numpy(),
                               rtol=1e-6)


def test_labels_as_tensors_of_any_type():
    p, labels = probabilities(5, 4).astype(np.float32), indices(5, classes=4)
    expected = losses.sparse_categorical_crossentropy(labels, p).numpy()
    for given in (Tensor(labels), Tensor(labels.astype(np.float64), dtype='float64')):
        np.testing.assert_array_equal(losses.sparse_categorical_crossentropy(given, p).numpy(),
                                      expected)
    for given in (Tensor(one_hot(labels, 4).astype(np.int64)), Tensor(one_hot(labels, 4))):
        np.testing.assert_allclose(losses.categorical_crossentropy(given, p).numpy(), expected,
                                   rtol=1e-6)


def test_sparse_sequence_labels():
    z, labels = logits(2, 3, 4), indices(2, 3, classes=4)
    compare_with_torch(
        torch, lambda a, b: losses.sparse_categorical_crossentropy(a, b, from_logits=True),
        lambda a, b: TF.cross_entropy(b.permute(0, 2, 1), a, reduction='none'), labels, z)


def keras_binary(t, p):
    p = p.clamp(EPS, 1 - EPS)
    return -(t * (p + EPS).log() + (1 - t) * (1 - p + EPS).log()).mean(-1)


def test_binary_probabilities_match_keras_formula_and_torch():
    p = np.random.default_rng(0).uniform(0.02, 0.98, size=(5, 3))
    t = np.random.default_rng(1).uniform(0, 1, size=(5, 3))
    value = compare_with_torch(torch, losses.binary_crossentropy, keras_binary, t, p)
    expected = TF.binary_cross_entropy(torch.tensor(p), torch.tensor(t), reduction='none')
    np.testing.assert_allclose(value, expected.mean(-1).numpy(), rtol=1e-5)


def test_binary_from_logits_and_label_smoothing_match_torch():
    z, t = logits(5, 3), np.random.default_rng(1).integers(0, 2, size=(5, 3)).astype(float)
    compare_with_torch(
        torch, lambda a, b: losses.binary_crossentropy(a, b, from_logits=True, label_smoothing=0.2),
        lambda a, b: TF.binary_cross_entropy_with_logits(b, a * 0.8 + 0.1,
                                                         reduction='none').mean(-1), t, z)


@pytest.mark.parametrize('scale', [1.0, 40.0])
def test_sigmoid_output_uses_its_logits(scale):
    z = logits(6, 1, scale=scale)
    labels = (z[:, 0] < 0).astype(np.int64)  # all wrong; (batch,) for an output (batch, 1)
    fused, y_pred = fused_and_torch(
        losses.binary_crossentropy, labels, z, 'sigmoid',
        lambda x, t: TF.binary_cross_entropy_with_logits(x, t, reduction='none').mean(-1),
        torch.tensor(labels[:, None], dtype=torch.float64))
    clipped = losses.binary_crossentropy(labels, y_pred.detach()).numpy()
    if scale == 1.0:
        np.testing.assert_allclose(clipped, fused, rtol=1e-6)
    else:
        assert clipped.max() < -np.log(EPS) < fused.max()


def test_kl_divergence_matches_torch():
    t, p = probabilities(4, 6, seed=3), probabilities(4, 6)
    t[0, 0] = 0.0  # clipped to 1e-7, as Keras does
    compare_with_torch(
        torch, losses.kl_divergence,
        lambda a, b: TF.kl_div(b.clamp(EPS, 1).log(), a.clamp(EPS, 1), reduction='none').sum(-1),
        t, p)


def test_poisson_matches_torch():
    t = np.random.default_rng(1).poisson(2.0, size=(4, 3)).astype(float)
    p = np.random.default_rng(2).uniform(0.1, 4.0, size=(4, 3))
    compare_with_torch(
        torch, losses.poisson,
        lambda a, b: TF.poisson_nll_loss(b, a, log_input=False, eps=EPS,
                                         reduction='none').mean(-1), t, p)


def test_float32_in_float32_out():
    p = probabilities(3, 4).astype(np.float32)
    assert losses.categorical_crossentropy(one_hot([0, 1, 2], 4), p).dtype == np.float32
    assert losses.sparse_categorical_crossentropy([0, 1, 2], p).dtype == np.float32


def test_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r'\(4, 3\).*\(4, 5\)'):
        losses.categorical_crossentropy(np.zeros((4, 3)), probabilities(4, 5))
    with pytest.raises(ValueError, match=r'\(4, 5\).*\(4, 2\)'):
        losses.sparse_categorical_crossentropy(np.zeros((4, 2)), probabilities(4, 5))
    with pytest.raises(ValueError, match=r'\(3,\).*\(4, 1\)'):
        losses.binary_crossentropy(np.zeros(3), np.full((4, 1), 0.5))
    with pytest.raises(ValueError, match='labels must lie in'):
        losses.sparse_categorical_crossentropy([0, 5], probabilities(2, 5))
    with pytest.raises(ValueError, match='label_smoothing'):
        losses.categorical_crossentropy(one_hot([0], 2), probabilities(1, 2), label_smoothing=1.5)
    with pytest.raises(TypeError, match='floating'):
        losses.categorical_crossentropy(one_hot([0], 2), np.array([[1, 0]]))
