"""LSTM and GRU through cuDNN's v8 RNN API, forward and backward.

The kernels have the signatures of ``functions.lstm.LSTM`` and
``functions.gru.GRUResetAfter``: batch-major ``(N, T, F)`` sequences, Keras
weights, optional initial states, ``reverse`` for a sequence read backwards
(cuDNN is given the time-reversed copy; its outputs are reversed back). The
GRU with ``reset_after=False`` has no cuDNN equivalent and keeps its plain
kernels. Weights are packed into cuDNN's weight space on every forward
(``rnn_weights``), since the optimizer changes them between steps.
"""

import ctypes

from minidl.compute.arrays import get_array_module
from minidl.compute.cuda import runtime
from minidl.compute.cuda.cudnn import api, constants, descriptors
from minidl.compute.cuda.cudnn.handle import cached_plan, handle, plan_key, pointer
from minidl.compute.cuda.cudnn.rnn_weights import GATE_ORDER, WeightLayout, pack, unpack

CELL_MODES = {'lstm': constants.RNN_LSTM, 'gru': constants.RNN_GRU}


class RNNPlan:
    """Descriptors, space sizes and weight layout of one RNN shape."""

    def __init__(self, xp, cell, bias_mode, batch, steps, features, units, dtype, training):
        cudnn_handle, functions = handle(), api.functions()
        self.dropout = descriptors.no_dropout(cudnn_handle)
        self.rnn = descriptors.rnn(CELL_MODES[cell], bias_mode, features, units, dtype,
                                   self.dropout)
        self.x = descriptors.rnn_data(dtype, steps, batch, features)
        self.y = descriptors.rnn_data(dtype, steps, batch, units)
        self.state = descriptors.tensor_nd((1, batch, units), dtype)
        self.mode = constants.FWD_MODE_TRAINING if training else constants.FWD_MODE_INFERENCE
        weight_bytes, workspace, reserve = (ctypes.c_size_t() for _ in range(3))
        functions.GetRNNWeightSpaceSize(cudnn_handle, self.rnn.value,
                                        ctypes.byref(weight_bytes))
        functions.GetRNNTempSpaceSizes(cudnn_handle, self.rnn.value, self.mode, self.x.value,
                                       ctypes.byref(workspace),
                                       ctypes.byref(reserve))
        self.weight_bytes, self.workspace, self.reserve = (
            weight_bytes.value, workspace.value, reserve.value)
        self.layout = WeightLayout(xp, cudnn_handle, self.rnn, self.weight_bytes, dtype,
                                   len(GATE_ORDER[cell]))
        # cuDNN reads the sequence lengths from device memory.
        self.lengths = xp.full(batch, steps, dtype=xp.int32)


class RNNKernel:
    """cuDNN recurrence with the signature of the ``_Recurrence`` Functions.

    Args:
        cell: 'lstm' or 'gru' (``reset_after=True``).
        reverse, has_bias, has_state: As the Function holds them.
        training: Whether backward will be called (keeps cuDNN's reserve space).
    """

    def __init__(self, cell, reverse, has_bias, has_state, training):
        self.cell, self.reverse, self.training = cell, reverse, training
        self.has_bias, self.has_state = has_bias, has_state
        bias_mode = constants.RNN_SINGLE_INP_BIAS if cell == 'lstm' else constants.RNN_DOUBLE_BIAS
        self.bias_mode = bias_mode if has_bias else constants.RNN_NO_BIAS

    def forward(self, x, kernel, recurrent_kernel, *rest):
        """``(outputs, h_last)`` (GRU) or ``(outputs, h_last, c_last)`` (LSTM)."""
        xp = self.xp = get_array_module(x)
        dtype = xp.result_type(x, kernel, recurrent_kernel, *rest)
        self.bias = rest[0].astype(dtype, copy=False) if self.has_bias else None
        states = [xp.ascontiguousarray(s, dtype=dtype)
                  for s in rest[int(self.has_bias):]] if self.has_state else []
        self.hx = states[0] if states else None
        self.cx = states[1] if len(states) > 1 else None
        batch, steps, features = x.shape
        units = recurrent_kernel.shape[0]
        key = plan_key('rnn', x.device.id, self.cell, self.bias_mode, batch, steps, features,
                       units, dtype.str, self.training)
        self.plan = plan = cached_plan(key, lambda: RNNPlan(
            xp, self.cell, self.bias_mode, batch, steps, features, units, dtype, self.training))
        self.x = xp.ascontiguousarray(x[:, ::-1] if self.reverse else x, dtype=dtype)
        self.weights = pack(plan.layout, self.cell, kernel.astype(dtype, copy=False),
                            recurrent_kernel.astype(dtype, copy=False), self.bias)
        self.y = xp.empty((batch, steps, units), dtype)
        hy = xp.empty((batch, units), dtype)
        cy = xp.empty((batch, units), dtype) if self.cell == 'lstm' else None
        self.reserve = runtime.allocate(plan.reserve)
        workspace = runtime.allocate(plan.workspace)
        api.functions().RNNForward(
            handle(), plan.rnn.value, plan.mode, pointer(plan.lengths), plan.x.value,
            pointer(self.x), plan.y.value, pointer(self.y), plan.state.value, pointer(self.hx),
            pointer(hy), plan.state.value, pointer(self.cx), pointer(cy), plan.weight_bytes,
            pointer(self.weights), plan.workspace, workspace.ptr, plan.reserve,
            self.reserve.ptr)
        outputs = self.y[:, ::-1] if self.reverse else self.y
        return (outputs, hy) + ((cy,) if cy is not None else ())

    def backward(self, grad_outputs, *grad_finals, needs_input_grad):
        """Gradients in the Function's input order; None where not needed."""
        xp, plan, dtype = self.xp, self.plan, self.y.dtype
        dy = xp.ascontiguousarray(grad_outputs[:, ::-1] if self.reverse else grad_outputs,
                                    dtype=dtype)
        dhy = xp.ascontiguousarray(grad_finals[0], dtype=dtype)
        dcy = xp.ascontiguousarray(grad_finals[1], dtype=dtype) if self.cell == 'lstm' else None
        dx = xp.empty_like(self.x)
        dhx = xp.empty_like(self.hx) if self.hx is not None else None
        dcx = xp.empty_like(self.cx) if self.cx is not None else None
        workspace = runtime.allocate(plan.workspace)
        functions, cudnn_handle = api.functions(), handle()
        # Backward data must run first: it prepares the reserve space for the weights' pass.
        functions.RNNBackwardData_v8(
            cudnn_handle, plan.rnn.value, pointer(plan.lengths), plan.y.value, pointer(self.y),
            pointer(dy), plan.x.value, pointer(dx), plan.state.value, pointer(self.hx),
            pointer(dhy), pointer(dhx), plan.state.value, pointer(self.cx), pointer(dcy),
            pointer(dcx), plan.weight_bytes, pointer(self.weights), plan.workspace,
            workspace.ptr, plan.reserve, self.reserve.ptr)
        grad_weights = (None, None, None)
        if any(needs_input_grad[1:3 + int(self.has_bias)]):
            space = xp.zeros_like(self.weights)  # cuDNN adds into it (WGRAD_MODE_ADD)
            functions.RNNBackwardWeights_v8(
                cudnn_handle, plan.rnn.value, constants.WGRAD_MODE_ADD, pointer(plan.lengths),
                plan.x.value, pointer(self.x), plan.state.value, pointer(self.hx), plan.y.value,
                pointer(self.y), plan.weight_bytes, pointer(space), plan.workspace,
                workspace.ptr, plan.reserve, self.reserve.ptr)
            bias_shape = None if self.bias is None else self.bias.shape
            grad_weights = unpack(plan.layout, self.cell, space, self.x.shape[2],
                                  self.y.shape[2], bias_shape)
        grads = (dx[:, ::-1] if self.reverse else dx,) + grad_weights[:2]
        if self.has_bias:
            grads += (grad_weights[2],)
        if self.has_state:
            grads += (dhx,) + ((dcx,) if self.cell == 'lstm' else ())
        return tuple(g if needed else None for g, needed in zip(grads, needs_input_grad))


def rnn_kernel(cell, reverse, has_bias, has_state, training, reset_after=True):
    """An :class:`RNNKernel`, or None for a GRU with ``reset_after=False``."""
    if cell == 'gru' and not reset_after:
        return None
    return RNNKernel(cell, reverse, has_bias, has_state, training)
