"""Jobs that must fail fast. Usage: failing_worker.py CASE, CASE one of

- raise: rank 1 raises inside the forward pass of its second training step,
  while rank 0 goes on into the gradient sum;
- exit: rank 1 calls ``sys.exit(3)`` there instead;
- kill: rank 1 kills itself with SIGKILL there;
- caught: rank 1 raises there, catches the error around fit and goes on with
  other work (a minute's sleep) while rank 0 waits in the gradient sum (run
  with a short MINIDL_DIST_TIMEOUT);
- exit_handled: rank 1's ``sys.exit(3)`` before training is caught by the
  script, which then trains to the end: the job must succeed;
- shapes: rank 1 builds a model whose last layer has another width;
- batch: a global batch size that 2 ranks cannot split evenly;
- samples: rank 1 has 60 samples, rank 0 has 64 (the same 4 steps of 16);
  each rank prints whether its weights are unchanged when fit refuses;
- activation: rank 1's last layer has a relu (the same weight shapes).
"""

import os
import signal
import sys
import time

import numpy as np

import minidl
import minidl_dist as dist
from minidl.layers import Dense, Layer
from minidl.models import Sequential


class FailOnRank1(Layer):
    """Passes its input through, except on rank 1 in the second training call."""

    calls = 0
    case = None

    def call(self, inputs, training=None):
        if training:
            FailOnRank1.calls += 1
            if dist.rank() == 1 and FailOnRank1.calls == 2:
                if self.case == 'exit':
                    sys.exit(3)
                if self.case == 'kill':
                    os.kill(os.getpid(), signal.SIGKILL)
                if self.case in ('raise', 'caught'):
                    raise RuntimeError('simulated failure in a layer')
        return inputs


def main(case):
    dist.init()
    minidl.set_seed(5)  # the same initial weights on every rank
    FailOnRank1.case = case
    width = 11 if case == 'shapes' and dist.rank() == 1 else 10
    activation = 'relu' if case == 'activation' and dist.rank() == 1 else None
    model = Sequential([Dense(8, input_shape=(4,)), FailOnRank1(),
                        Dense(width, activation=activation)])
    model.compile(dist.DistributedOptimizer('sgd'), 'mse')
    count = 60 if case == 'samples' and dist.rank() == 1 else 64
    x = np.ones((count, 4), 'float32')
    y = np.zeros((count, width), 'float32')
    before = model.get_weights()
    epochs = 2 if case == 'exit_handled' else 100
    if case == 'exit_handled' and dist.rank() == 1:
        try:
            sys.exit(3)
        except SystemExit as handled:
            print(f'rank 1: handled exit {handled.code}', flush=True)
    try:
        model.fit(x, y, batch_size=33 if case == 'batch' else 16, epochs=epochs, verbose=0)
    except ValueError:
        unchanged = all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
        print(f'rank {dist.rank()}: weights unchanged: {unchanged}', flush=True)
        raise
    except RuntimeError:
        if case != 'caught':
            raise
        time.sleep(60)  # goes on with other work; rank 0 still waits for it
    print(f'rank {dist.rank()}: done', flush=True)


if __name__ == '__main__':
    main(sys.argv[1])
