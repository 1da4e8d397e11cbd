"""oneDNN recurrences in inference: a prediction has the bits of the training pass's forward.

Inference runs the same forward primitive as training (oneDNN's forward_training; its
forward_inference rounds differently for some shapes: checked on 3.2, e.g. an LSTM of 512
inputs), but writes each batch chunk's hidden states straight into its columns of one
time-major array of the whole batch (a strided output) instead of the chunk's own array. These
cases use the real chunk rules (no test-sized chunks), at sizes of the workloads (W6's LSTM, a
GRU and LSTM of W5's widths) and odd ones, forward and reversed, with initial states: outputs
and final states must be bitwise those of a forward that records for backward, on one pool
thread and on two.
"""

import numpy as np
import pytest

from minidl import config, no_grad
from minidl.compute import vendor
from minidl.compute.onednn.rnn import RNNKernel
from minidl.functions.gru import gru
from minidl.functions.lstm import lstm
from minidl.functions.rnn import _Recurrence
from minidl.tensor import Tensor

from tests.minidl.compute.onednn_support import on_threads, require_onednn

require_onednn('its recurrences')

# cell, batch, steps, features, units, reversed, initial states
CASES = [
    ('lstm', 32, 50, 32, 128, False, False),  # W6
    ('lstm', 33, 7, 512, 64, True, True),  # 512 inputs
    ('gru', 32, 20, 161, 256, False, True),
    ('gru', 40, 30, 13, 33, True, False),
    ('lstm', 35, 25, 20, 40, False, True),  # uneven chunks of 18 and 17 rows
]


@pytest.fixture
def real_chunks(monkeypatch):
    monkeypatch.setattr(config, 'use_onednn', 'always')
    vendor.forget()
    yield
    vendor.forget()


def _run(case, training):
    """Outputs and final states of one call, and its vendor kernel."""
    cell, batch, steps, features, units, reverse, with_states = case
    gates = 4 if cell == 'lstm' else 3
    rng = np.random.default_rng(batch * steps + features + units)

    def normal(*shape, scale=1.0):
        return Tensor((rng.standard_normal(shape) * scale).astype(np.float32),
                      requires_grad=training)

    x = normal(batch, steps, features)
    kernel = normal(features, gates * units, scale=features ** -0.5)
    recurrent = normal(units, gates * units, scale=units ** -0.5)
    bias = normal(*((gates * units,) if cell == 'lstm' else (2, gates * units)), scale=0.5)
    count = 2 if cell == 'lstm' else 1
    states = [normal(batch, units) for _ in range(count)] if with_states else None
    seen = []
    forward = _Recurrence.forward

    def spy(self, *arrays):
        result = forward(self, *arrays)
        seen.append(self.parts[0].vendor_kernel)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Recurrence, 'forward', spy)
        if cell == 'lstm':
            outputs = lstm(x, kernel, recurrent, bias, states and tuple(states), reverse=reverse)
        else:
            outputs = gru(x, kernel, recurrent, bias, states and states[0], reverse=reverse)
    (kernel_run,) = seen
    return [np.array(out.numpy(), copy=True) for out in outputs], kernel_run


@pytest.mark.parametrize('case', CASES, ids=lambda case: '-'.join(map(str, case)))
def test_a_prediction_has_the_bits_of_the_training_forward(case, real_chunks, monkeypatch):
    trained, training_kernel = _run(case, training=True)
    assert type(training_kernel) is RNNKernel and training_kernel.training

    def infer():
        with no_grad():
            arrays, kernel = _run(case, training=False)
        assert type(kernel) is RNNKernel and not kernel.training
        assert len(kernel.chunks) == 2  # the chunks write into one time-major array
        return arrays

    for threads in (1, 2):
        inferred = on_threads(monkeypatch, threads, False, infer)
        assert len(inferred) == len(trained)
        for name, a, b in zip(['outputs', 'h_last', 'c_last'], inferred, trained):
            assert a.shape == b.shape, name
            assert np.array_equal(a, b), f'{name} on {threads} pool threads'
