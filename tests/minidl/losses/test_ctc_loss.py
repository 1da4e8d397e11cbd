"""The CTC loss of compile: per-sample values and gradients against PyTorch's ctc_loss."""

import numpy as np
import pytest

from minidl import losses
from minidl.tensor import Tensor

torch = pytest.importorskip('torch')

# Four samples padded to 9 frames and 4 labels: lengths and labels differ per sample,
# with a repeated label (needs a blank between), an empty transcript, and padding
# written as 0 or -1 (anything <= 0 ends a transcript).
FRAMES, CLASSES = 9, 6
INPUT_LENGTHS = np.array([9, 6, 4, 7])
LABELS = np.array([[1, 2, 2, 3], [4, 5, 0, 0], [0, 0, 0, 0], [5, 1, -1, -1]])
LABEL_LENGTHS = np.array([4, 2, 0, 2])


def _logits():
    return np.random.default_rng(3).normal(size=(4, FRAMES, CLASSES))


def _masked(array):
    tensor = Tensor(array, dtype=np.float64, requires_grad=True)
    tensor._keras_mask = Tensor(np.arange(FRAMES) < INPUT_LENGTHS[:, None])
    return tensor


def _torch_ctc(log_probabilities):
    return torch.nn.functional.ctc_loss(
        log_probabilities.transpose(0, 1), torch.tensor(np.maximum(LABELS, 0)),
        torch.tensor(INPUT_LENGTHS), torch.tensor(LABEL_LENGTHS), reduction='none')


def test_probabilities_with_mask_match_torch_values_and_gradients():
    logits = _logits()
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    y_pred = _masked(probabilities)
    values = losses.ctc(LABELS.astype(np.float32), y_pred)
    weights = np.array([1.0, 2.0, -1.0, 0.5])
    (values * Tensor(weights)).sum().backward()

    reference_input = torch.tensor(probabilities, requires_grad=True)
    reference = _torch_ctc(torch.log(reference_input))
    (reference * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(values.numpy(), reference.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(y_pred.grad.numpy(), reference_input.grad.numpy(), rtol=1e-7,
                               atol=1e-10)


def test_logits_class_with_mask_matches_torch():
    logits = _logits()
    y_pred = _masked(logits)
    loss = losses.CTC(from_logits=True)
    value = loss(LABELS, y_pred)
    value.backward()

    reference_input = torch.tensor(logits, requires_grad=True)
    reference = _torch_ctc(torch.log_softmax(reference_input, -1)).mean()
    reference.backward()
    np.testing.assert_allclose(value.item(), reference.item(), rtol=1e-10)
    np.testing.assert_allclose(y_pred.grad.numpy(), reference_input.grad.numpy(), rtol=1e-7,
                               atol=1e-12)


def test_without_a_mask_every_frame_counts():
    logits = _logits()
    values = losses.ctc(LABELS, Tensor(logits, dtype=np.float64), from_logits=True)
    reference = torch.nn.functional.ctc_loss(
        torch.log_softmax(torch.tensor(logits), -1).transpose(0, 1),
        torch.tensor(np.maximum(LABELS, 0)), torch.full((4,), FRAMES),
        torch.tensor(LABEL_LENGTHS), reduction='none')
    np.testing.assert_allclose(values.numpy(), reference.numpy(), rtol=1e-10)


def test_a_mask_with_holes_is_refused():
    y_pred = Tensor(_logits())
    mask = np.ones((4, FRAMES), bool)
    mask[1, 2] = False
    y_pred._keras_mask = Tensor(mask)
    with pytest.raises(ValueError, match='prefix mask'):
        losses.ctc(LABELS, y_pred, from_logits=True)


def test_registered_by_name_and_marked_as_reading_the_mask():
    assert losses.get('ctc') is losses.ctc
    restored = losses.deserialize(losses.serialize(losses.CTC(from_logits=True)))
    assert isinstance(restored, losses.CTC) and restored.fn_kwargs == {'from_logits': True}
    assert losses.CTC.consumes_mask and losses.ctc.consumes_mask
    assert not losses.MeanSquaredError.consumes_mask
