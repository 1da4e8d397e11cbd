"""The autograd engine: construction, operators, backward, graph lifetime."""

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

import minidl
from minidl import Tensor, no_grad


def test_float_data_defaults_to_float32_and_integers_keep_their_type():
    assert Tensor([1.0, 2.0]).dtype == np.float32
    assert Tensor(np.zeros(3, np.float64)).dtype == np.float32
    assert Tensor(np.zeros(3), dtype='float64').dtype == np.float64
    assert Tensor([1, 2]).dtype == np.int64
    assert Tensor(3.5).shape == ()


def test_attributes_and_conversions():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert (x.shape, x.ndim, x.size, len(x)) == ((2, 3), 2, 6, 2)
    assert isinstance(x.numpy(), np.ndarray)
    assert Tensor(4.0).item() == 4.0
    assert str(x.device) == 'cpu'
    assert 'Tensor(' in repr(x)


def test_only_floating_tensors_require_grad():
    with pytest.raises(TypeError, match='floating'):
        Tensor([1, 2], requires_grad=True)


def test_operators_match_numpy_and_keep_float32():
    a_np = np.array([[1.0, -2.0, 3.0]], np.float32)
    b_np = np.array([[0.5], [4.0]], np.float32)
    a, b = Tensor(a_np), Tensor(b_np)
    results = {
        'add': (a + b, a_np + b_np), 'sub': (a - b, a_np - b_np), 'mul': (a * b, a_np * b_np),
        'div': (a / b, a_np / b_np), 'pow': (b ** 2, b_np ** 2), 'neg': (-a, -a_np),
        'radd': (1 + a, 1 + a_np), 'rsub': (1 - a, 1 - a_np), 'rdiv': (2 / b, 2 / b_np),
        'matmul': (b @ a, b_np @ a_np), 'scalar': (a * 2.5, a_np * 2.5),
        'numpy_left': (np.float64(2.0) * a, 2.0 * a_np),
    }
    for name, (got, want) in results.items():
        assert got.dtype == np.float32, name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=name)


def test_comparisons_return_tensors_without_gradient():
    a = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    result = a > 1.5
    assert result.dtype == bool and not result.requires_grad
    np.testing.assert_array_equal((a == 2.0).numpy(), [False, True, False])
    np.testing.assert_array_equal((a <= Tensor([1.0, 1.0, 5.0])).numpy(), [True, False, True])


def test_backward_matches_hand_derivatives():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Tensor([4.0, 5.0, 6.0], requires_grad=True)
    loss = (x * y + x ** 2).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4 + 2, 5 + 4, 6 + 6])
    np.testing.assert_allclose(y.grad.numpy(), [1, 2, 3])


def test_gradients_accumulate_across_backward_calls_and_shared_uses():
    x = Tensor([2.0], requires_grad=True)
    (x * x * x).sum().backward()  # x used three times in one graph: 3 x^2
    np.testing.assert_allclose(x.grad.numpy(), [12.0])
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [15.0])


def test_broadcast_gradients_are_summed_to_the_input_shape():
    x = Tensor(np.ones((4, 3)), requires_grad=True)
    bias = Tensor(np.ones(3), requires_grad=True)
    scale = Tensor(np.ones((4, 1)), requires_grad=True)
    ((x + bias) * scale).sum().backward()
    assert bias.grad.shape == (3,) and scale.grad.shape == (4, 1)
    np.testing.assert_allclose(bias.grad.numpy(), [4, 4, 4])
    np.testing.assert_allclose(scale.grad.numpy(), [[6]] * 4)


def test_diamond_graph_runs_each_function_once_with_summed_gradient():
    x = Tensor([3.0], requires_grad=True)
    h = x * 2           # used by both branches
    out = (h * h + h).sum()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 * (2 * 6 + 1)])


def test_a_chain_of_ten_thousand_operations_needs_no_recursion():
    x = Tensor([1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001 ** 10_000], rtol=1e-3)


def test_graph_is_freed_unless_retained():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match='retain_graph'):
        y.backward()


def test_backward_needs_a_gradient_for_non_scalars():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match='single-element'):
        (x * 2).backward()
    (x * 2).backward(np.array([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])
    with pytest.raises(ValueError, match='shape'):
        (x * 2).backward(np.ones(3))


def test_backward_on_a_tensor_without_grad_is_an_error():
    with pytest.raises(RuntimeError, match='does not require grad'):
        Tensor([1.0]).sum().backward()


def test_no_grad_records_nothing_and_works_as_decorator():
    x = Tensor([1.0], requires_grad=True)
    with no_grad():
        y = x * 2
    assert not y.requires_grad and y.creator is None

    @no_grad()
    def double(t):
        return t * 2
    assert not double(x).requires_grad
    assert (x * 2).requires_grad


def test_detach_cuts_the_graph():
    x = Tensor([3.0], requires_grad=True)
    y = (x * x).detach()
    assert not y.requires_grad
    z = x * y
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [9.0])


def test_only_inputs_that_need_gradients_get_them():
    x = Tensor([1.0, 2.0], requires_grad=True)
    constant = Tensor([5.0, 6.0])
    (x * constant).sum().backward()
    assert constant.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 6.0])


def test_unused_outputs_of_multi_output_functions_get_zero_gradient():
    x = Tensor(np.arange(6.0), requires_grad=True)
    first, _, third = minidl.functions.split(x, 3)
    (first.sum() + 2 * third.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 0, 0, 2, 2])


def test_indexing_with_gradients():
    x = Tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    y = x[1:, ::2].sum() + x[np.array([0, 0, 2]), 1].sum() + x[x > 10.5].sum()
    y.backward()
    want = np.zeros((3, 4))
    want[1:, ::2] += 1
    want[0, 1] += 2
    want[2, 1] += 1
    want[2, 3] += 1
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_methods_bound_to_functions():
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((6,)).shape == (6,)
    assert x.T.shape == (3, 2) and x.transpose(1, 0).shape == (3, 2)
    assert x.astype('float64').dtype == np.float64
    np.testing.assert_allclose(x.sum(axis=0).numpy(), [3, 5, 7])
    np.testing.assert_allclose(x.mean().item(), 2.5)
    np.testing.assert_allclose(x.max(axis=1).numpy(), [2, 5])


def _reduce_to(array, shape):
    """Independent reference: sum ``array`` down to ``shape`` axis by axis."""
    while array.ndim > len(shape):
        array = array.sum(axis=0)
    return array.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(data=st.data())
def test_broadcast_gradients_for_any_compatible_shapes(data):
    out_shape = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))

    def input_shape():  # a suffix of the output's axes, some of them shrunk to 1
        suffix = out_shape[data.draw(st.integers(0, len(out_shape))):]
        return tuple(1 if data.draw(st.booleans()) else n for n in suffix)

    a_shape, b_shape = input_shape(), input_shape()
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    a = Tensor(a_np, dtype='float64', requires_grad=True)
    b = Tensor(b_np, dtype='float64', requires_grad=True)
    (a * b).sum().backward()
    full = np.broadcast_shapes(a_shape, b_shape)
    np.testing.assert_allclose(a.grad.numpy(), _reduce_to(np.broadcast_to(b_np, full), a_shape))
    np.testing.assert_allclose(b.grad.numpy(), _reduce_to(np.broadcast_to(a_np, full), b_shape))


def test_python_numbers_and_arrays_take_the_tensors_float_dtype():
    from minidl import functions as F
    x = Tensor(np.ones(3, np.float32), requires_grad=True)
    for result in (F.add(x, 1), F.maximum(x, 0), F.mul(2, x), F.pow(x, 2),
                   F.where(np.array([True, False, True]), x, 0), F.mul(x, np.ones(3))):
        assert result.dtype == np.float32


def test_a_leafs_grad_owns_its_memory():
    w1 = Tensor(np.ones(3), requires_grad=True)
    w2 = Tensor(np.ones(3), requires_grad=True)
    upstream = np.ones(3, np.float32)
    (w1 + w2).backward(upstream)
    w1.grad.data *= 0.5  # an in-place update of one gradient ...
    np.testing.assert_array_equal(w2.grad.numpy(), [1, 1, 1])  # ... reaches no other array
    np.testing.assert_array_equal(upstream, [1, 1, 1])
    x = Tensor(np.ones((1, 3)), requires_grad=True)
    x.sum(axis=0).sum().backward()
    x.grad.data *= 2  # writable even when backward produced a broadcast view


def test_iteration_and_numpy_conversion():
    x = Tensor(np.arange(6.0).reshape(3, 2))
    assert [row.shape for row in x] == [(2,), (2,), (2,)]
    with pytest.raises(TypeError, match='0-d'):
        list(Tensor(5.0))
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(3, 2))
    with pytest.raises(TypeError, match='numbers or booleans'):
        Tensor(['a', 'b'])
    assert (x == None) is False  # noqa: E711  (identity comparison, not an elementwise one)
