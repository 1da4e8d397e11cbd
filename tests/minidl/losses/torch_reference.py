"""Run a minidl loss and a PyTorch reference on the same data, forward and backward."""

import numpy as np

from minidl.tensor import Tensor


def compare_with_torch(torch, ours, theirs, y_true, y_pred, rtol=1e-9, atol=1e-12):
    """Check values and gradients w.r.t. ``y_pred`` (float64) under a random upstream gradient.

    ``ours(y_true, y_pred_tensor)`` and ``theirs(torch_y_true, torch_y_pred)``
    must return per-sample losses of the same shape.
    """
    y_pred = np.asarray(y_pred, dtype=np.float64)
    prediction = Tensor(y_pred, dtype='float64', requires_grad=True)
    loss = ours(y_true, prediction)
    upstream = np.random.default_rng(7).standard_normal(loss.shape)
    loss.backward(upstream)
    torch_prediction = torch.tensor(y_pred, requires_grad=True)
    expected = theirs(torch.as_tensor(np.asarray(y_true)), torch_prediction)
    expected.backward(torch.tensor(upstream))
    assert loss.shape == tuple(expected.shape)
    np.testing.assert_allclose(loss.numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(prediction.grad.numpy(), torch_prediction.grad.numpy(),
                               rtol=rtol, atol=atol)
    return loss.numpy()
