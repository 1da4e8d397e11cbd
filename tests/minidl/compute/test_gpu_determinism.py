"""On a GPU: small models trained twice, in two processes, give identical weights;
with cuDNN and without it they agree to float32 tolerance. Skips without a GPU.

Two levels: Functions called by hand (a CNN and an LSTM), and Keras models
trained with ``fit`` (a CNN with batch norm, pooling and dropout; a
bidirectional LSTM and a GRU), whose run also reports which vendor kernels
ran, so the test proves cuDNN's branch was taken.
"""

import json
import pathlib
import subprocess
import sys

import numpy as np
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


KERAS_SCRIPT = '''
import hashlib, json, sys
import numpy as np
import minidl
from minidl.compute import vendor
from minidl.layers import (GRU, LSTM, BatchNormalization, Bidirectional, Conv2D, Dense, Dropout,
                           Flatten, MaxPooling2D)
from minidl.models import Sequential

seed, use_cudnn, weights_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
minidl.set_default_device('gpu')
minidl.config.use_cudnn = use_cudnn
ran = set()
ask = vendor.kernel
def recording(xp, name, dtype, **params):
    kernel = ask(xp, name, dtype, **params)
    if kernel is not None:
        ran.add(type(kernel).__module__ + '.' + type(kernel).__name__)
    return kernel
vendor.kernel = recording

rng = np.random.default_rng(seed)
def train(model, x, y):
    # Plain SGD: its steps follow the gradients' differences smoothly (Adam's
    # normalised steps would turn a rounding difference in a near-zero gradient
    # into a whole step of the learning rate).
    model.compile('sgd', 'sparse_categorical_crossentropy')
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    return [np.asarray(w) for w in model.get_weights()]

minidl.set_seed(seed)
cnn = Sequential([Conv2D(8, 3, padding='same', input_shape=(12, 12, 3)), BatchNormalization(),
                  MaxPooling2D(), Dropout(0.2), Conv2D(8, 3, strides=2), Flatten(),
                  Dense(4, activation='softmax')])
cnn_weights = train(cnn, rng.standard_normal((64, 12, 12, 3)).astype('float32'),
                    rng.integers(0, 4, 64))
minidl.set_seed(seed)
rnn = Sequential([Bidirectional(LSTM(12, return_sequences=True), input_shape=(10, 5)),
                  GRU(8, reset_after=True), Dense(3, activation='softmax')])
rnn_weights = train(rnn, rng.standard_normal((48, 10, 5)).astype('float32'),
                    rng.integers(0, 3, 48))
weights = cnn_weights + rnn_weights
np.savez(weights_path, *weights)
digest = hashlib.sha256(b''.join(np.ascontiguousarray(w).tobytes() for w in weights))
print(json.dumps({'digest': digest.hexdigest(), 'ran': sorted(ran)}))
'''


def train_keras_models(seed, use_cudnn, tmp_path):
    """``(digest, vendor kernels that ran, weights)`` of one run in a fresh process."""
    path = tmp_path / f'weights-{seed}-{use_cudnn}-{len(list(tmp_path.iterdir()))}.npz'
    result = subprocess.run([sys.executable, '-c', KERAS_SCRIPT, str(seed), use_cudnn, str(path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    with np.load(path) as saved:
        weights = [saved[name] for name in saved.files]
    return report['digest'], report['ran'], weights


def test_keras_models_with_cudnn_repeat_bits_and_match_the_reference(tmp_path):
    require_gpu()
    digest, ran, weights = train_keras_models(5, 'auto', tmp_path)
    assert {name.split('.')[-1] for name in ran} >= {
        'Conv2DKernel', 'Pool2DKernel', 'BatchNormKernel', 'RNNKernel'}, ran
    assert all(name.startswith('minidl.compute.cuda.cudnn.') for name in ran), ran
    again, _, _ = train_keras_models(5, 'auto', tmp_path)
    assert again == digest
    reference_digest, reference_ran, reference = train_keras_models(5, 'never', tmp_path)
    assert reference_ran == []
    assert len(reference) == len(weights)
    for got, want in zip(weights, reference):
        # Two epochs of SGD from the same start: float32 rounding differences stay small.
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
