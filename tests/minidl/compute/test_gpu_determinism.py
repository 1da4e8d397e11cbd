"""On a GPU: a small CNN and a small LSTM trained twice, in one process and in two,
give identical weights. Skips without a GPU."""

import pathlib
import subprocess
import sys

import pytest

from tests.minidl.compute.gpu_support import require_gpu

ROOT = pathlib.Path(__file__).resolve().parents[3]

SCRIPT = '''
import hashlib, sys
import numpy as np
import minidl
from minidl import Tensor, functions as F, no_grad
from minidl.compute import Generator

minidl.set_default_device('gpu')
minidl.config.use_cudnn = sys.argv[2]

def train(model):
    g = Generator(int(sys.argv[1]))
    if model == 'cnn':
        x = Tensor(g.normal((16, 12, 12, 3)))
        labels = Tensor(g.integers(0, 4, shape=(16,)))
        weights = [Tensor(g.normal((3, 3, 3, 8), stddev=0.3), requires_grad=True),
                   Tensor(np.ones(8), requires_grad=True), Tensor(np.zeros(8), requires_grad=True),
                   Tensor(g.normal((8, 4), stddev=0.3), requires_grad=True)]
        def loss():
            k, gamma, beta, dense = weights
            h = F.relu(F.batch_norm(F.conv2d(x, k, padding='same'), gamma, beta, None, None,
                                    training=True))
            h = F.dropout(F.max_pool2d(h, 2), 0.2, generator=g)
            return F.softmax_cross_entropy(labels, F.global_avg_pool2d(h) @ dense).mean()
    else:
        x = Tensor(g.normal((8, 10, 5)))
        target = Tensor(g.normal((8, 6)))
        weights = [Tensor(g.normal((5, 24), stddev=0.3), requires_grad=True),
                   Tensor(g.normal((6, 24), stddev=0.3), requires_grad=True),
                   Tensor(np.zeros(24), requires_grad=True)]
        def loss():
            _, h, _ = F.lstm(x, *weights)
            return ((h - target) ** 2).mean()
    for _ in range(5):
        for w in weights:
            w.grad = None
        loss().backward()
        with no_grad():
            for w in weights:
                w.data -= 0.1 * w.grad.data
    digest = hashlib.sha256()
    for w in weights:
        digest.update(np.ascontiguousarray(w.numpy()).tobytes())
    return digest.hexdigest()

print(train('cnn'), train('lstm'))
'''


def run(seed, use_cudnn):
    result = subprocess.run([sys.executable, '-c', SCRIPT, str(seed), use_cudnn], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.parametrize('use_cudnn', ['auto', 'never'])
def test_training_twice_in_two_processes_gives_identical_weights(use_cudnn):
    require_gpu()
    first, second = run(3, use_cudnn), run(3, use_cudnn)
    assert len(first) == 2 and first == second
    assert run(4, use_cudnn) != first
