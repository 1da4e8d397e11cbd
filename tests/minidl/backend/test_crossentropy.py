"""The backend's cross-entropies against numpy; CTC against PyTorch."""

import numpy as np
import pytest

from minidl import backend as K
from minidl.gradcheck import gradcheck
from minidl.tensor import Tensor

rng = np.random.default_rng(4)
logits = rng.standard_normal((4, 3)) * 2
probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
one_hot = np.eye(3)[[0, 2, 1, 2]]


def t(array):
    return Tensor(array, dtype=array.dtype)


def _log_softmax(a, axis=-1):
    shifted = a - a.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


def test_categorical_crossentropy():
    unnormalized = probabilities * 3  # Keras rescales the predictions to sum to one
    got = K.categorical_crossentropy(t(one_hot), t(unnormalized))
    np.testing.assert_allclose(K.eval(got), -np.sum(one_hot * np.log(probabilities), -1),
                               rtol=1e-10)
    got = K.categorical_crossentropy(t(one_hot), t(logits), from_logits=True)
    np.testing.assert_allclose(K.eval(got), -np.sum(one_hot * _log_softmax(logits), -1),
                               rtol=1e-10)
    # Classes along axis 1 of (batch, classes, steps).
    targets, outputs = one_hot[:, :, None], probabilities[:, :, None]
    got = K.categorical_crossentropy(t(targets), t(outputs), axis=1)
    np.testing.assert_allclose(K.eval(got), -np.sum(targets * np.log(outputs), 1), rtol=1e-10)
    # Probabilities of 0 are clipped to epsilon.
    got = K.categorical_crossentropy(Tensor([[0.0, 1.0]]), Tensor([[1.0, 0.0]]))
    np.testing.assert_allclose(K.eval(got), [-np.log(1e-7)], rtol=1e-5)


def test_sparse_categorical_crossentropy():
    labels = np.array([0, 2, 1, 2])
    want = -np.log(probabilities[np.arange(4), labels])
    np.testing.assert_allclose(K.eval(K.sparse_categorical_crossentropy(t(labels),
                                                                        t(probabilities))),
                               want, rtol=1e-10)
    as_column = K.sparse_categorical_crossentropy(t(labels[:, None].astype(float)),
                                                  t(logits), from_logits=True)
    np.testing.assert_allclose(K.eval(as_column), -_log_softmax(logits)[np.arange(4), labels],
                               rtol=1e-10)
    by_axis = K.sparse_categorical_crossentropy(t(labels[:, None]), t(probabilities[:, :, None]),
                                                axis=1)
    np.testing.assert_allclose(K.eval(by_axis), want[:, None], rtol=1e-10)


def test_binary_crossentropy_is_elementwise():
    targets = rng.uniform(0, 1, (4, 3))
    p = 1 / (1 + np.exp(-logits))
    want = -(targets * np.log(p) + (1 - targets) * np.log(1 - p))
    np.testing.assert_allclose(K.eval(K.binary_crossentropy(t(targets), t(p))), want, rtol=1e-9)
    np.testing.assert_allclose(
        K.eval(K.binary_crossentropy(t(targets), t(logits), from_logits=True)), want, rtol=1e-9)
    clipped = K.binary_crossentropy(Tensor([1.0]), Tensor([0.0]))
    np.testing.assert_allclose(K.eval(clipped), [-np.log(1e-7)], rtol=1e-5)


@pytest.mark.parametrize('call', [
    lambda target, output: K.categorical_crossentropy(target, output),
    lambda target, output: K.categorical_crossentropy(target, output, from_logits=True),
    lambda target, output: K.binary_crossentropy(target, output),
    lambda target, output: K.binary_crossentropy(target, output, from_logits=True),
], ids=['categorical', 'categorical-logits', 'binary', 'binary-logits'])
def test_gradients_match_finite_differences(call):
    assert gradcheck(lambda output: call(Tensor(one_hot, dtype='float64'), output),
                     [probabilities])


def test_ctc_batch_cost_matches_torch_with_the_last_class_as_blank():
    torch = pytest.importorskip('torch')
    steps, classes = 6, 4
    scores = rng.standard_normal((2, steps, classes))
    y_pred = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    labels = np.array([[0, 2, 1], [1, 1, 0]])
    input_length, label_length = np.array([[6], [5]]), np.array([[3], [2]])
    got = K.ctc_batch_cost(t(labels), t(y_pred), t(input_length), t(label_length))
    assert K.int_shape(got) == (2, 1)
    want = torch.nn.functional.ctc_loss(
        torch.tensor(np.log(y_pred)).permute(1, 0, 2), torch.tensor(labels),
        torch.tensor(input_length[:, 0]), torch.tensor(label_length[:, 0]),
        blank=classes - 1, reduction='none')
    np.testing.assert_allclose(K.eval(got)[:, 0], want.numpy(), rtol=1e-5)


def test_ctc_batch_cost_takes_the_blank_as_a_label_as_tensorflow_does():
    # Keras 2's image_ocr labels its empty images [blank] (label length 1) and pads labels
    # with -1. With every frame's path all blanks, TensorFlow's lattice holds T (T + 1) / 2
    # of them: the loss is -sum log p(blank) - log(T (T + 1) / 2).
    steps, classes = 5, 4
    scores = rng.standard_normal((2, steps, classes))
    y_pred = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    labels = np.array([[classes - 1, -1], [classes - 1, 1]])
    got = K.eval(K.ctc_batch_cost(t(labels), t(y_pred), t(np.array([[5], [4]])),
                                  t(np.array([[1], [1]]))))[:, 0]
    want = [-np.log(y_pred[0, :, -1] + K.epsilon()).sum() - np.log(15),
            -np.log(y_pred[1, :4, -1] + K.epsilon()).sum() - np.log(10)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match='labels must lie in'):
        K.ctc_batch_cost(t(np.array([[classes]])), t(y_pred[:1]), t(np.array([[5]])),
                         t(np.array([[1]])))
