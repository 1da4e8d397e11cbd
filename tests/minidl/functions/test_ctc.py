import itertools

import numpy as np
import pytest

from minidl import Tensor, no_grad
from minidl.functions.ctc import CTCLoss, ctc_loss
from tests.gradcases import GradCase, random, run_gradcheck

torch = pytest.importorskip('torch')


GRADCHECK_CASES = [
    # Repeated labels, a short input, an empty label sequence.
    GradCase(CTCLoss,
             lambda logits: ctc_loss([[1, 1], [2, 0], [2, 1]], logits, [4, 3, 2], [2, 1, 0]),
             [random(3, 4, 3)]),
    # TensorFlow's blank labels: alone, and between other labels (where the skips of the
    # backward pass differ from those of the forward pass if taken from the wrong label).
    GradCase(CTCLoss,
             lambda logits: ctc_loss([[0, 0, 0], [1, 0, 2], [2, 0, 0]], logits, [4, 5, 3],
                                     [1, 3, 2], blank_labels=True),
             [random(3, 5, 3)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def _torch_ctc(logits, labels, input_lengths, label_lengths, weights, zero_infinity=False):
    """PyTorch's per-sample losses and the gradient of ``sum(weights * loss)`` to the logits."""
    tensor = torch.tensor(logits, requires_grad=True)
    log_probs = torch.log_softmax(tensor, dim=-1).transpose(0, 1)
    loss = torch.nn.functional.ctc_loss(
        log_probs, torch.tensor(labels), torch.tensor(input_lengths), torch.tensor(label_lengths),
        blank=0, reduction='none', zero_infinity=zero_infinity)
    loss.backward(torch.tensor(weights))
    return loss.detach().numpy(), tensor.grad.numpy()


def _minidl_ctc(logits, labels, input_lengths, label_lengths, weights):
    tensor = Tensor(logits, requires_grad=True)
    loss = ctc_loss(labels, tensor, input_lengths, label_lengths)
    loss.backward(weights)
    return loss.numpy(), tensor.grad.numpy()


def test_matches_torch_with_variable_lengths_repeats_and_impossible_alignments():
    rng = np.random.default_rng(0)
    batch, frames, classes, max_labels = 8, 12, 6, 5
    logits = (rng.standard_normal((batch, frames, classes)) * 2).astype(np.float32)
    labels = rng.integers(1, classes, size=(batch, max_labels))
    labels[0] = [3, 3, 3, 2, 2]                      # repeats need blanks between them
    labels[1, :2] = [4, 4]
    labels[5, :3] = [2, 2, 2]                        # 3 + 2 blanks = 5 frames needed
    input_lengths = np.array([12, 9, 5, 1, 7, 4, 12, 6])
    label_lengths = np.array([5, 2, 1, 1, 0, 3, 4, 5])
    weights = rng.standard_normal(batch).astype(np.float32)

    expected_loss, _ = _torch_ctc(logits, labels, input_lengths, label_lengths, weights)
    _, expected_grad = _torch_ctc(logits, labels, input_lengths, label_lengths, weights,
                                  zero_infinity=True)
    loss, grad = _minidl_ctc(logits, labels, input_lengths, label_lengths, weights)

    assert loss.dtype == np.float32 and grad.dtype == np.float32
    assert np.isinf(expected_loss[5]) and np.isinf(loss[5])
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-5, atol=1e-5)
    # The impossible sample gets a zero gradient, as PyTorch's with zero_infinity=True.
    np.testing.assert_array_equal(grad[5], 0)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-4, atol=1e-5)
    # No gradient past each sample's input length.
    for sample, length in enumerate(input_lengths):
        np.testing.assert_array_equal(grad[sample, length:], 0)


def test_matches_torch_at_benchmark_size():
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((16, 100, 29)) * 3).astype(np.float32)
    labels = rng.integers(1, 29, size=(16, 20))
    lengths, label_lengths = np.full(16, 100), np.full(16, 20)
    weights = np.full(16, 1 / 16, np.float32)
    # A float64 reference: both float32 implementations sit within rounding of it.
    tensor = torch.tensor(logits.astype(np.float64), requires_grad=True)
    reference = torch.nn.functional.ctc_loss(
        torch.log_softmax(tensor, -1).transpose(0, 1), torch.tensor(labels),
        torch.tensor(lengths), torch.tensor(label_lengths), reduction='none')
    reference.backward(torch.tensor(weights, dtype=torch.float64))
    loss, grad = _minidl_ctc(logits, labels, lengths, label_lengths, weights)
    np.testing.assert_allclose(loss, reference.detach().numpy(), rtol=2e-6)
    np.testing.assert_allclose(grad, tensor.grad.numpy(), atol=2e-5)


def test_hand_computed_two_frames():
    # T = 2, classes {blank, a}, label "a": the alignments are (a, a), (blank, a), (a, blank).
    logits = np.array([[[0.3, -0.2], [1.1, 0.4]]])
    probs = np.exp(logits[0]) / np.exp(logits[0]).sum(axis=1, keepdims=True)
    likelihood = probs[0, 1] * probs[1, 1] + probs[0, 0] * probs[1, 1] + probs[0, 1] * probs[1, 0]
    loss = ctc_loss([[1]], Tensor(logits, dtype='float64'), [2], [1])
    np.testing.assert_allclose(loss.numpy(), [-np.log(likelihood)], rtol=1e-12)


def test_repeated_label_needs_a_blank_between():
    logits = random(1, 3, 3, seed=4)
    probs = np.exp(logits[0]) / np.exp(logits[0]).sum(axis=1, keepdims=True)
    # "a a" in 3 frames has one alignment, (a, blank, a); in 2 frames none.
    loss = ctc_loss([[1, 1]], Tensor(logits, dtype='float64'), [3], [2])
    np.testing.assert_allclose(loss.numpy(), [-np.log(probs[0, 1] * probs[1, 0] * probs[2, 1])],
                               rtol=1e-12)
    assert np.isinf(ctc_loss([[1, 1]], logits, [2], [2]).item())
    # "a b" fits in 2 frames.
    assert np.isfinite(ctc_loss([[1, 2]], logits, [2], [2]).item())


def test_impossible_alignment_gives_inf_loss_without_nan():
    logits = Tensor(random(2, 3, 5, seed=5), requires_grad=True)
    loss = ctc_loss([[1, 2, 3, 4], [1, 2, 0, 0]], logits, [3, 3], [4, 2])
    assert np.isinf(loss.numpy()[0]) and np.isfinite(loss.numpy()[1])
    loss.backward(np.ones(2))
    assert np.isfinite(logits.grad.numpy()).all()
    np.testing.assert_array_equal(logits.grad.numpy()[0], 0)


def test_loss_is_the_same_with_and_without_gradient():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((4, 20, 7)).astype(np.float32)
    labels = rng.integers(1, 7, size=(4, 6))
    arguments = (labels, [20, 15, 9, 20], [6, 3, 4, 0])
    with_grad = ctc_loss(arguments[0], Tensor(logits, requires_grad=True), *arguments[1:])
    with no_grad():
        without_grad = ctc_loss(arguments[0], logits, *arguments[1:])
    assert with_grad.numpy().tobytes() == without_grad.numpy().tobytes()


def test_is_deterministic():
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((6, 30, 9)).astype(np.float32)
    labels = rng.integers(1, 9, size=(6, 8))
    results = []
    for _ in range(2):
        tensor = Tensor(logits.copy(), requires_grad=True)
        loss = ctc_loss(labels, tensor, np.full(6, 30), np.full(6, 8))
        loss.backward(np.ones(6, np.float32))
        results.append((loss.numpy().tobytes(), tensor.grad.numpy().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize('shape, labels, label_lengths', [
    ((1, 1, 4), [[2]], [1]),                       # one sample and one frame
    ((2, 3, 1), np.zeros((2, 0), np.int64), [0, 0]),  # the blank class only
], ids=['N=T=1', 'C=1'])
@pytest.mark.parametrize('requires_grad', [False, True])
def test_leaves_the_callers_logits_untouched(shape, labels, label_lengths, requires_grad):
    # Class-major, such logits are already contiguous: no copy is made before the log-softmax.
    logits = random(*shape, seed=9).astype(np.float32)
    original = logits.copy()
    tensor = Tensor(logits, requires_grad=requires_grad)
    loss = ctc_loss(labels, tensor if requires_grad else logits, [shape[1]] * shape[0],
                    label_lengths)
    if requires_grad:
        assert tensor.data is logits
        loss.backward(np.ones(shape[0], np.float32))
    assert np.isfinite(loss.numpy()).all()
    np.testing.assert_array_equal(logits, original)


def test_accepts_tensors_lists_and_arrays_for_labels_and_lengths():
    logits = random(2, 4, 3, seed=8).astype(np.float32)
    from_arrays = ctc_loss(np.array([[1, 2], [2, 0]]), logits, np.array([4, 3]), np.array([2, 1]))
    from_lists = ctc_loss([[1, 2], [2, 0]], logits, [4, 3], [2, 1])
    from_tensors = ctc_loss(Tensor([[1, 2], [2, 0]]), logits, Tensor([4, 3]), Tensor([2, 1]))
    np.testing.assert_array_equal(from_arrays.numpy(), from_lists.numpy())
    np.testing.assert_array_equal(from_arrays.numpy(), from_tensors.numpy())


@pytest.mark.parametrize('labels,input_lengths,label_lengths,message', [
    ([[1, 3]], [4], [2], r'labels must lie in \[1, 2\]'),
    ([[0, 1]], [4], [2], r'labels must lie in \[1, 2\]'),
    ([[1, 2]], [5], [2], r'input_lengths must lie in \[1, 4\]'),
    ([[1, 2]], [0], [2], r'input_lengths must lie in \[1, 4\]'),
    ([[1, 2]], [4], [3], r'label_lengths must lie in \[0, 2\]'),
    ([[1, 2]], [4, 4], [2], r'input_lengths must have shape \(1,\)'),
    ([1, 2], [4], [2], r'labels must be \(1, max_label_length\)'),
])
def test_rejects_bad_arguments(labels, input_lengths, label_lengths, message):
    with pytest.raises(ValueError, match=message):
        ctc_loss(labels, np.zeros((1, 4, 3), np.float32), input_lengths, label_lengths)


def test_rejects_bad_types_and_shapes():
    with pytest.raises(TypeError, match='labels must be integers'):
        ctc_loss([[1.0]], np.zeros((1, 4, 3), np.float32), [4], [1])
    with pytest.raises(TypeError, match='logits must be floating'):
        ctc_loss([[1]], np.zeros((1, 4, 3), np.int64), [4], [1])
    with pytest.raises(ValueError, match=r'logits must be \(batch, frames, classes\)'):
        ctc_loss([[1]], np.zeros((4, 3), np.float32), [4], [1])
    with pytest.raises(ValueError, match='at least one sample and one frame'):
        ctc_loss(np.zeros((0, 2), np.int64), np.zeros((0, 4, 3), np.float32),
                 np.zeros(0, np.int64), np.zeros(0, np.int64))


def _alignments_by_enumeration(probs, labels):
    """The likelihood summed over every path of TensorFlow's CTC lattice, by enumeration.

    Positions of the extended sequence (blank, l1, blank, ..., blank); a path
    starts at position 0 or 1, ends at the last or second-last, and at each
    frame stays, moves one on, or skips two onto a label that is not the blank
    and differs from the label two before.
    """
    extended = [0]
    for label in labels:
        extended += [label, 0]
    length, total = len(extended), 0.0
    for path in itertools.product(range(length), repeat=len(probs)):
        steps = np.diff(path)
        if path[0] > 1 or path[-1] < length - 2 or (steps < 0).any() or (steps > 2).any():
            continue
        if any(step == 2 and (extended[end] == 0 or extended[end] == extended[end - 2])
               for step, end in zip(steps, path[1:])):
            continue
        total += np.prod([probs[frame, extended[position]]
                          for frame, position in enumerate(path)])
    return total


@pytest.mark.parametrize('labels', [[0], [1, 0], [0, 2], [1, 0, 1], [2, 0, 0]])
def test_blank_labels_follow_tensorflows_lattice(labels):
    # Keras 2's image_ocr labels its empty images with the blank; TensorFlow aligns such a
    # label like any other, except that no skip reaches it.
    frames = 5
    logits = random(1, frames, 3, seed=len(labels) + sum(labels))
    probs = np.exp(logits[0]) / np.exp(logits[0]).sum(axis=1, keepdims=True)
    loss = ctc_loss([labels], Tensor(logits, dtype='float64'), [frames], [len(labels)],
                    blank_labels=True)
    np.testing.assert_allclose(loss.numpy(), [-np.log(_alignments_by_enumeration(probs, labels))],
                               rtol=1e-10)
    # A lone blank label: every path is all blanks, T (T + 1) / 2 of them through the lattice.
    if labels == [0]:
        np.testing.assert_allclose(
            loss.numpy(), [-np.log(probs[:, 0]).sum() - np.log(frames * (frames + 1) / 2)])


def test_blank_labels_are_refused_unless_asked_for():
    with pytest.raises(ValueError, match=r'labels must lie in \[1, 2\]'):
        ctc_loss([[1, 0]], random(1, 4, 3), [4], [2])
