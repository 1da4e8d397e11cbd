"""oneDNN recurrences in inference: oneDNN's inference forward, its bits fixed by the data.

A prediction runs oneDNN's forward_inference (no workspace kept for a backward), writing
each batch chunk's hidden states straight into its columns of one time-major array of the
whole batch. It rounds differently from the training forward on some shapes (an LSTM of 512
inputs, for one), so the two agree to float32 rounding; what must hold bitwise is that a
prediction does not depend on how the batch was cut: on one pool thread or two, and for a
sequence predicted in a smaller batch (a rank's shard, another chunk size). These cases use
the real chunk rules (no test-sized chunks), at sizes of the workloads (W6's LSTM, a GRU and
LSTM of W5's widths) and odd ones, forward and reversed, with initial states.
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

from tests.minidl.compute.onednn_support import assert_close, on_threads, require_onednn

require_onednn('its recurrences')

# cell, batch, steps, features, units, reversed, initial states
CASES = [
    ('lstm', 32, 50, 32, 128, False, False),  # W6
    ('lstm', 33, 7, 512, 64, True, True),  # 512 inputs
    ('gru', 32, 20, 161, 256, False, True),
    ('gru', 40, 30, 13, 33, True, False),
    ('lstm', 35, 25, 20, 40, False, True),  # uneven chunks of 18 and 17 rows
]
IDS = ['-'.join(map(str, case)) for case in CASES]


@pytest.fixture
def real_chunks(monkeypatch):
    monkeypatch.setattr(config, 'use_onednn', 'always')
    vendor.forget()
    yield
    vendor.forget()


def _run(case, training, rows=None):
    """Outputs and final states of one call (on the first ``rows`` sequences), and its
    vendor kernel."""
    cell, batch, steps, features, units, reverse, with_states = case
    gates = 4 if cell == 'lstm' else 3
    rng = np.random.default_rng(batch * steps + features + units)
    rows = slice(None, rows)

    def normal(*shape, scale=1.0, batched=False):
        array = (rng.standard_normal(shape) * scale).astype(np.float32)
        return Tensor(np.ascontiguousarray(array[rows]) if batched else array,
                      requires_grad=training)

    x = normal(batch, steps, features, batched=True)
    kernel = normal(features, gates * units, scale=features ** -0.5)
    recurrent = normal(units, gates * units, scale=units ** -0.5)
    bias = normal(*((gates * units,) if cell == 'lstm' else (2, gates * units)), scale=0.5)
    count = 2 if cell == 'lstm' else 1
    states = [normal(batch, units, batched=True) for _ in range(count)] if with_states else None
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


def _pairs(first, second):
    """(name, array of ``first``, array of ``second``) of two calls' results."""
    assert len(first) == len(second)
    return zip(['outputs', 'h_last', 'c_last'], first, second)


def _predict(case, rows=None):
    with no_grad():
        arrays, kernel = _run(case, training=False, rows=rows)
    assert type(kernel) is RNNKernel and not kernel.training
    return arrays, kernel


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_a_prediction_runs_the_inference_forward_and_agrees_with_training(case, real_chunks):
    trained, training_kernel = _run(case, training=True)
    assert type(training_kernel) is RNNKernel and training_kernel.training
    assert len(training_kernel.workspaces) == 2  # one per chunk, for the backward
    predicted, kernel = _predict(case)
    assert len(kernel.chunks) == 2 and not kernel.workspaces
    size = kernel.chunks[0][1]
    assert not kernel._plan(size, training=False, output_rows=case[1]).training
    for name, a, b in _pairs(predicted, trained):
        assert_close(a, b, 1e-6, name)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_a_prediction_has_the_same_bits_on_one_and_two_pool_threads(
        case, real_chunks, monkeypatch):
    one, two = (on_threads(monkeypatch, count, False, lambda: _predict(case)[0])
                for count in (1, 2))
    for name, a, b in _pairs(one, two):
        assert np.array_equal(a, b), name


@pytest.mark.parametrize('case', CASES, ids=IDS)
@pytest.mark.parametrize('rows', [2, 17])
def test_a_sequence_is_predicted_alike_in_a_smaller_batch(case, rows, real_chunks):
    # The truth is a second call on fewer sequences: one chunk of ``rows``, not two halves.
    whole, _ = _predict(case)
    part, kernel = _predict(case, rows)
    assert kernel.chunks == [(0, rows)]
    for name, a, b in _pairs(whole, part):
        assert np.array_equal(a[:rows], b), name
