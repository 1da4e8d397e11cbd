"""K.function, K.gradients, stop_gradient and the learning phase, against numpy."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.layers import Dense, Dropout, Input
from minidl.models import Model
from minidl.tensor import Tensor

rng = np.random.default_rng(6)
kernel, bias = rng.standard_normal((4, 3)).astype('float32'), rng.standard_normal(3).astype(
    'float32')
x_values = rng.standard_normal((5, 4)).astype('float32')


def small_model():
    inputs = Input((4,))
    dense = Dense(3, activation='tanh', weights=[kernel, bias])
    return inputs, dense, dense(inputs)


@pytest.fixture(autouse=True)
def unset_learning_phase():
    yield
    K.clear_session()


def test_function_computes_outputs_from_inputs():
    inputs, _, outputs = small_model()
    f = K.function([inputs], [outputs, K.sum(outputs, axis=1)])
    hidden, total = f([x_values])
    want = np.tanh(x_values @ kernel + bias)
    np.testing.assert_allclose(hidden, want, rtol=1e-5)
    np.testing.assert_allclose(total, want.sum(1), rtol=1e-5)
    single = K.function([inputs], K.mean(outputs))
    np.testing.assert_allclose(single([x_values]), want.mean(), rtol=1e-5)


def test_function_may_feed_a_tensor_inside_the_graph():
    inputs, _, hidden = small_model()
    doubled = hidden * 2
    f = K.function([hidden], [doubled])
    np.testing.assert_array_equal(f([np.ones((2, 3), 'float32')])[0], np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match="input 'input_1'.* not among the tensors fed"):
        K.function([Input((3,))], [doubled])([np.ones((2, 3))])


def test_function_checks_what_it_is_given():
    inputs, _, outputs = small_model()
    f = K.function([inputs], [outputs])
    with pytest.raises(ValueError, match='takes 1 input'):
        f([x_values, x_values])
    with pytest.raises(ValueError, match=r'shape \(5, 3\) was fed'):
        f([np.zeros((5, 3))])
    with pytest.raises(TypeError, match='symbolic tensor'):
        K.function([K.variable(0.0)], [outputs])
    with pytest.raises(TypeError, match='pair'):
        K.function([inputs], [outputs], updates=[outputs])


def test_function_updates_variables_after_each_call():
    inputs = Input((2,))
    total = K.variable(0.0)
    f = K.function([inputs], [K.sum(inputs)], updates=[(total, K.sum(inputs) + 1)])
    f([np.ones((3, 2))])
    assert K.get_value(total) == 7.0


def test_learning_phase_fed_to_a_function():
    inputs = Input((50,))
    outputs = Dropout(0.5)(inputs)
    f = K.function([inputs, K.learning_phase()], [outputs])
    ones = np.ones((4, 50), 'float32')
    np.testing.assert_array_equal(f([ones, 0])[0], ones)
    dropped = f([ones, 1])[0]
    assert set(np.unique(dropped)) == {0.0, 2.0}
    test_mode = K.function([inputs], [outputs])
    np.testing.assert_array_equal(test_mode([ones])[0], ones)
    K.set_learning_phase(1)
    assert K.learning_phase() == 1
    assert 0.0 in test_mode([ones])[0]
    with pytest.raises(ValueError, match='0 or 1'):
        K.set_learning_phase(2)


def test_gradients_of_a_tensor_leave_every_grad_as_it_was():
    v = K.variable([1.0, -2.0])
    w = K.variable([3.0, 0.5])
    w.grad = Tensor([100.0, 100.0])
    loss = K.sum(K.square(v * w))
    grad_v, grad_w = K.gradients(loss, [v, w])
    np.testing.assert_allclose(K.eval(grad_v), 2 * np.array([1.0, -2.0]) * [9.0, 0.25])
    np.testing.assert_allclose(K.eval(grad_w), 2 * np.array([3.0, 0.5]) * [1.0, 4.0])
    assert v.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), [100.0, 100.0])
    unused = K.variable([1.0])
    np.testing.assert_array_equal(K.eval(K.gradients(loss, unused)[0]), [0.0])
    # A tensor made after the loss is not in its graph: zeros, as for an unused variable.
    np.testing.assert_array_equal(K.eval(K.gradients(loss, [v * 2])[0]), [0.0, 0.0])
    # A tensor inside the graph gets its own gradient, and the leaves' stay untouched.
    product = v * w
    grad_product, grad_v = K.gradients(K.sum(K.square(product)), [product, v])
    np.testing.assert_allclose(K.eval(grad_product), 2 * np.array([3.0, -1.0]))
    np.testing.assert_allclose(K.eval(grad_v), 2 * np.array([3.0, -1.0]) * [3.0, 0.5])
    assert v.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), [100.0, 100.0])


def test_gradients_with_respect_to_a_model_input():
    # conv_filter_visualization's idiom: a loss on a layer's output, its gradient with
    # respect to the input, normalised, and both computed by one function.
    inputs, _, outputs = small_model()
    loss = K.mean(outputs[:, 0])
    grads = K.gradients(loss, inputs)[0]
    assert K.int_shape(grads) == (None, 4)
    grads /= K.sqrt(K.mean(K.square(grads))) + K.epsilon()
    loss_value, grads_value = K.function([inputs], [loss, grads])([x_values])
    y = np.tanh(x_values @ kernel + bias)
    want = (1 - y[:, :1] ** 2) * kernel[:, 0] / len(x_values)
    want /= np.sqrt(np.mean(want ** 2)) + 1e-7
    np.testing.assert_allclose(loss_value, y[:, 0].mean(), rtol=1e-5)
    np.testing.assert_allclose(grads_value, want, rtol=1e-4)


def test_gradients_with_respect_to_a_hidden_tensor_and_weights():
    inputs, dense, hidden = small_model()
    loss = K.sum(K.square(hidden))
    grad_hidden, grad_kernel, grad_unused = K.gradients(
        loss, [hidden, dense.trainable_weights[0], K.variable(np.zeros(2))])
    assert K.int_shape(grad_kernel) == (4, 3)
    f = K.function([inputs], [grad_hidden, grad_kernel, grad_unused])
    got_hidden, got_kernel, got_unused = f([x_values])
    y = np.tanh(x_values @ kernel + bias)
    np.testing.assert_allclose(got_hidden, 2 * y, rtol=1e-5)
    np.testing.assert_allclose(got_kernel, x_values.T @ (2 * y * (1 - y ** 2)), rtol=1e-4)
    np.testing.assert_array_equal(got_unused, [0.0, 0.0])
    assert dense.trainable_weights[0].grad is None


def test_stop_gradient():
    v = K.variable([2.0])
    loss = K.sum(v * K.stop_gradient(v))
    np.testing.assert_array_equal(K.eval(K.gradients(loss, [v])[0]), [2.0])
    a, b = K.stop_gradient([v, v * 3])
    assert not a.requires_grad and not b.requires_grad
    inputs = Input((2,))
    held = K.stop_gradient(inputs * 3)
    grads = K.gradients(K.sum(held * inputs), [inputs])[0]
    np.testing.assert_array_equal(K.function([inputs], [grads])([np.ones((1, 2))])[0], [[3, 3]])


def test_switch_and_phases():
    x, y = Tensor([1.0, 2.0]), Tensor([10.0, 20.0])
    assert K.switch(True, x, y) is x
    assert K.switch(Tensor(0), lambda: x, lambda: y) is y
    np.testing.assert_array_equal(K.eval(K.switch(Tensor([True, False]), x, y)), [1.0, 20.0])
    rows = K.switch(Tensor([True, False]), Tensor(np.ones((2, 3))), Tensor(np.zeros((2, 3))))
    np.testing.assert_array_equal(K.eval(rows), [[1, 1, 1], [0, 0, 0]])
    assert K.in_train_phase(x, y) is y
    assert K.in_train_phase(lambda: x, y, training=True) is x
    assert K.in_test_phase(x, y, training=0) is x
    K.set_learning_phase(1)
    assert K.in_train_phase(x, y) is x
    with pytest.raises(ValueError, match='more than'):
        K.switch(Tensor(np.ones((2, 2), bool)), x, y)


def test_switch_on_symbolic_condition():
    inputs = Input((3,))
    chosen = K.switch(K.greater(inputs, 0), inputs, lambda: inputs * 10)
    values = np.array([[1.0, -1.0, 2.0]], 'float32')
    np.testing.assert_array_equal(Model(inputs, chosen).predict(values), [[1.0, -10.0, 2.0]])


def test_map_and_folds():
    elems = Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(K.eval(K.map_fn(lambda row: K.sum(row), elems)), [3, 7, 11])
    np.testing.assert_array_equal(K.eval(K.foldl(lambda a, row: a * 2 + row, elems)), [15, 22])
    np.testing.assert_array_equal(K.eval(K.foldr(lambda a, row: a * 2 + row, elems)), [27, 34])
    np.testing.assert_array_equal(
        K.eval(K.foldl(lambda a, row: a + row, elems, initializer=Tensor([100.0, 0.0]))),
        [109, 12])
    inputs = Input((3,))
    mapped = K.map_fn(lambda row: row * 2, inputs)
    np.testing.assert_array_equal(Model(inputs, mapped).predict(np.ones((2, 3), 'float32')),
                                  np.full((2, 3), 2.0))


def test_print_tensor_prints_when_computed(capsys):
    inputs = Input((2,))
    printed = K.print_tensor(inputs * 2, message='doubled:')
    assert capsys.readouterr().out == ''
    Model(inputs, printed).predict(np.ones((1, 2), 'float32'))
    assert capsys.readouterr().out.startswith('doubled: [[2. 2.]]')


def test_clear_session_restarts_names_and_the_phase():
    K.set_learning_phase(1)
    K.clear_session()
    assert K.learning_phase() == 0
    assert Dense(2).name == 'dense'
    with K.name_scope('block'):
        assert Dense(2).name == 'dense_1'
