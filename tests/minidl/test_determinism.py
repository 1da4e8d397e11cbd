"""Same seed, same bits: a small training computation hashed in separate processes."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = '''
import hashlib, sys
import numpy as np
import minidl
from minidl import Tensor, functions as F
from minidl.compute import default_generator

minidl.set_seed(int(sys.argv[1]))
g = default_generator()
x = Tensor(g.normal((4, 8, 8, 3)))
kernel = Tensor(g.normal((3, 3, 3, 5), stddev=0.2), requires_grad=True)
gamma, beta = Tensor(np.ones(5), requires_grad=True), Tensor(np.zeros(5), requires_grad=True)
mean, variance = Tensor(np.zeros(5)), Tensor(np.ones(5))
lstm_kernel = Tensor(g.normal((5, 16), stddev=0.3), requires_grad=True)
lstm_recurrent = Tensor(g.normal((4, 16), stddev=0.3), requires_grad=True)
labels = g.integers(1, 4, shape=(4, 3))

h = F.conv2d(x, kernel, padding='same', strides=2)                      # (4, 4, 4, 5)
h = F.batch_norm(h, gamma, beta, mean, variance, training=True)
h = F.dropout(F.relu(h), 0.3, generator=g)
h = F.max_pool2d(h, pool_size=2, strides=1)                              # (4, 3, 3, 5)
sequence = F.reshape(h, (4, 9, 5))
outputs, _, _ = F.lstm(sequence, lstm_kernel, lstm_recurrent)
loss = F.ctc_loss(labels, outputs, np.full(4, 9), np.full(4, 3)).mean()
loss.backward()

digest = hashlib.sha256()
for array in [loss.data, kernel.grad.data, gamma.grad.data, lstm_kernel.grad.data,
              lstm_recurrent.grad.data, mean.data, variance.data]:
    digest.update(np.ascontiguousarray(array).tobytes())
print(digest.hexdigest())
'''


def run(seed):
    result = subprocess.run([sys.executable, '-c', SCRIPT, str(seed)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_same_seed_gives_identical_bits_in_two_processes():
    first, second = run(7), run(7)
    assert len(first) == 64
    assert first == second


def test_a_different_seed_gives_different_bits():
    assert run(7) != run(8)
