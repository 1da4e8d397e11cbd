"""Jobs that must fail fast. Usage: failing_worker.py CASE, CASE one of

- raise: rank 1 raises inside the forward pass of its second training step,
  while rank 0 goes on into the gradient sum;
- shapes: rank 1 builds a model whose last layer has another width;
- batch: a global batch size that 2 ranks cannot split evenly.
"""

import sys

import numpy as np

import minidl_dist as dist
from minidl.layers import Dense, Layer
from minidl.models import Sequential


class FailOnRank1(Layer):
    """Passes its input through, except on rank 1 in the second training call."""

    calls = 0

    def call(self, inputs, training=None):
        if training:
            FailOnRank1.calls += 1
            if dist.rank() == 1 and FailOnRank1.calls == 2:
                raise RuntimeError('simulated failure in a layer')
        return inputs


def main(case):
    dist.init()
    width = 11 if case == 'shapes' and dist.rank() == 1 else 10
    model = Sequential([Dense(8, input_shape=(4,)), FailOnRank1(), Dense(width)])
    model.compile(dist.DistributedOptimizer('sgd'), 'mse')
    x = np.ones((64, 4), 'float32')
    y = np.zeros((64, width), 'float32')
    model.fit(x, y, batch_size=33 if case == 'batch' else 16, epochs=100, verbose=0)


if __name__ == '__main__':
    main(sys.argv[1])
