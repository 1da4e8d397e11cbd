import numpy as np
import pytest

from minidl.functions.embedding import Embedding, embedding
from minidl.tensor import Tensor
from tests.gradcases import GradCase, random, run_gradcheck

torch = pytest.importorskip('torch')

GRADCHECK_CASES = [
    GradCase(Embedding, embedding, [np.array([[1, 3, 1], [0, 1, 4]]), random(6, 3)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def test_forward_and_backward_match_torch_with_repeated_indices():
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((20, 8)).astype(np.float32)
    indices = rng.integers(0, 20, size=(16, 12))  # 192 lookups of 20 rows: many repeats
    weights_tensor = Tensor(weights, requires_grad=True)
    y = embedding(indices, weights_tensor)
    upstream = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(upstream)
    reference = torch.tensor(weights, requires_grad=True)
    expected = torch.nn.functional.embedding(torch.tensor(indices), reference)
    expected.backward(torch.tensor(upstream))
    assert y.shape == (16, 12, 8) and y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), expected.detach().numpy())
    np.testing.assert_allclose(weights_tensor.grad.numpy(), reference.grad.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_gradient_is_bitwise_repeatable():
    rng = np.random.default_rng(1)
    weights = rng.standard_normal((7, 5)).astype(np.float32)
    indices = rng.integers(0, 7, size=300)
    upstream = rng.standard_normal((300, 5)).astype(np.float32)
    grads = []
    for _ in range(2):
        weights_tensor = Tensor(weights, requires_grad=True)
        embedding(indices, weights_tensor).backward(upstream)
        grads.append(weights_tensor.grad.numpy())
    assert np.array_equal(grads[0], grads[1])


def test_scalar_index_gives_one_row():
    weights = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(embedding(np.array(2), weights).numpy(), [4, 5])


@pytest.mark.parametrize('indices, error, message', [
    (np.array([0, 5]), ValueError, r'\[0, 5\).*from 0 to 5'),
    (np.array([-1, 2]), ValueError, r'from -1 to 2'),
    (np.array([0.0, 1.0]), TypeError, 'integer indices'),
])
def test_rejects_bad_indices(indices, error, message):
    with pytest.raises(error, match=message):
        embedding(indices, np.zeros((5, 3), dtype=np.float32))


def test_rejects_weights_that_are_not_a_matrix():
    with pytest.raises(ValueError, match=r'\(vocabulary, dimension\), got shape \(5,\)'):
        embedding(np.array([0]), np.zeros(5, dtype=np.float32))
