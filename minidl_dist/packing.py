"""One flat host buffer per step: the gradients and state changes that ranks sum.

A *term* is what one part of a global batch (a rank's part, or one
micro-shard) contributes: every trainable weight's gradient, the change of
every state weight (moving statistics) from the step's starting values,
one flag per weight saying whether it got a gradient, and a 1 counting the
part. Terms are summed (locally, then over ranks) as one buffer, so a
single fixed-order reduction carries everything, in buckets of a few MiB.
After the sum each gradient is written back (copied from host memory to
the weight's device), and each state weight becomes its starting value
plus the mean change over the parts that ran.
"""

import numpy as np

from minidl import Tensor
from minidl_dist.comm import from_host, to_host


class Packing:
    """The layout of a term for the weights ``params`` and ``states``.

    Args:
        params: Trainable weight Tensors (whose ``.grad`` are summed).
        states: State weight Tensors (whose changes are averaged).

    Raises:
        NotImplementedError: If the weights do not all have one floating dtype.
    """

    def __init__(self, params, states):
        self.params, self.states = list(params), list(states)
        dtypes = {np.dtype(weight.dtype) for weight in self.params + self.states}
        if len(dtypes) > 1:
            raise NotImplementedError(f'minidl_dist sums gradients of one dtype; this model mixes '
                                      f'{sorted(str(d) for d in dtypes)}')
        self.dtype = dtypes.pop() if dtypes else np.dtype(np.float32)
        sizes = [weight.size for weight in self.params + self.states]
        self.offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()
        self.flags = self.offsets[-1]                   # one per param, then the part count
        self.template = np.zeros(self.flags + len(self.params) + 1, self.dtype)

    def matches(self, params, states):
        """Whether this layout is for exactly these weights."""
        return _same(self.params, params) and _same(self.states, states)

    def _segment(self, buffer, index):
        return buffer[self.offsets[index]:self.offsets[index + 1]]

    def snapshot(self):
        """Host copies of the state weights (the step's starting values)."""
        return [np.array(to_host(state.data)) for state in self.states]

    def fill(self, term, snapshot):
        """Write the current gradients and state changes into ``term``."""
        for index, param in enumerate(self.params):
            target = self._segment(term, index)
            if param.grad is None:
                target[...] = 0
                term[self.flags + index] = 0
            else:
                target[...] = to_host(param.grad.data).reshape(-1)
                term[self.flags + index] = 1
        for index, (state, start) in enumerate(zip(self.states, snapshot)):
            target = self._segment(term, len(self.params) + index)
            np.subtract(to_host(state.data).reshape(-1), start.reshape(-1), out=target)
        term[-1] = 1

    def restore(self, snapshot):
        """Put the state weights back to their starting values."""
        for state, start in zip(self.states, snapshot):
            state.data[...] = from_host(start, state.data)

    def unpack(self, total, snapshot):
        """Set gradients and state weights from the summed ``total``."""
        for index, param in enumerate(self.params):
            if total[self.flags + index] == 0:
                param.grad = None
                continue
            values = self._segment(total, index).reshape(param.shape)
            if param.grad is None:
                param.grad = Tensor(from_host(values.copy(), param.data), dtype=param.dtype)
            else:
                param.grad.data[...] = from_host(values, param.grad.data)
        parts = total[-1]
        for index, (state, start) in enumerate(zip(self.states, snapshot)):
            change = self._segment(total, len(self.params) + index).reshape(state.shape)
            state.data[...] = from_host(start + change / parts, state.data)


def _same(first, second):
    return len(first) == len(second) and all(a is b for a, b in zip(first, second))
