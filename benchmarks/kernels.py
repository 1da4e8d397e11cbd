"""Core kernels, forward + backward, minidl against PyTorch in one run.

    python -m benchmarks.kernels [--steps 20] [--only conv2d] [--json out.jsonl]

Each row builds the same computation in both frameworks from the same data
(the workloads' shapes; images NCHW for PyTorch, NHWC for minidl's
channels-last default, transposed before timing), times forward + backward of
``output.sum()`` step by step, and prints the ratio of medians minidl/PyTorch.
Gradients are asked only where the workload needs them: a network's first
layer needs none for its input. Each framework times every row in a process
of its own (``--framework torch``, then ``minidl``), so that neither's idle
threads spin into the other's time.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as TF

from benchmarks.common import time_steps
from minidl import Tensor, functions as F


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def _param(array):
    return Tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def conv2d_case(batch, size, channels, filters, kernel, stride, padding, input_grad):
    x = _data(batch, channels, size, size)
    w = _data(kernel, kernel, channels, filters, seed=1) * 0.1
    b = _data(filters, seed=2)
    mx = Tensor(x.transpose(0, 2, 3, 1).copy(), requires_grad=input_grad)
    mw, mb = _param(w)[0], _param(b)[0]
    tx = torch.tensor(x, requires_grad=input_grad)
    tw = torch.tensor(w.transpose(3, 2, 0, 1).copy(), requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    explicit = ((padding, padding), (padding, padding))
    return (lambda: F.conv2d(mx, mw, mb, strides=stride, padding=explicit),
            lambda: TF.conv2d(tx, tw, tb, stride=stride, padding=padding))


def max_pool_case():
    x = _data(8, 64, 55, 55)
    mx = Tensor(x.transpose(0, 2, 3, 1).copy(), requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    return (lambda: F.max_pool2d(mx, pool_size=3, strides=2),
            lambda: TF.max_pool2d(tx, kernel_size=3, stride=2))


def batch_norm_case():
    x = _data(64, 16, 32, 32)
    mx = Tensor(x.transpose(0, 2, 3, 1).copy(), requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    m_gamma, t_gamma = _param(np.ones(16, np.float32))
    m_beta, t_beta = _param(np.zeros(16, np.float32))
    m_mean, m_var = Tensor(np.zeros(16, np.float32)), Tensor(np.ones(16, np.float32))
    t_mean, t_var = torch.zeros(16), torch.ones(16)
    return (lambda: F.batch_norm(mx, m_gamma, m_beta, m_mean, m_var, training=True,
                                 momentum=0.9, epsilon=1e-5),
            lambda: TF.batch_norm(tx, t_mean, t_var, t_gamma, t_beta, training=True,
                                  momentum=0.1, eps=1e-5))


def lstm_case(batch, steps, features, units):
    x = _data(batch, steps, features)
    kernel = _data(features, 4 * units, seed=1) * 0.05
    recurrent = _data(units, 4 * units, seed=2) * 0.05
    bias = _data(4 * units, seed=3) * 0.05
    mx = Tensor(x)
    mk, mr, mb = (_param(a)[0] for a in (kernel, recurrent, bias))
    layer = torch.nn.LSTM(features, units, batch_first=True)
    with torch.no_grad():  # same weights: PyTorch's gates i, f, g, o match Keras's i, f, c, o
        layer.weight_ih_l0.copy_(torch.tensor(kernel.T))
        layer.weight_hh_l0.copy_(torch.tensor(recurrent.T))
        layer.bias_ih_l0.copy_(torch.tensor(bias))
        layer.bias_hh_l0.zero_()
    tx = torch.tensor(x)
    return (lambda: F.lstm(mx, mk, mr, mb)[0], lambda: layer(tx)[0])


def ctc_case():
    rng = np.random.default_rng(0)
    logits = _data(16, 100, 29)
    labels = rng.integers(1, 29, size=(16, 20))
    lengths, label_lengths = np.full(16, 100), np.full(16, 20)
    m_logits, t_logits = _param(logits)
    t_labels = torch.tensor(labels)
    t_lengths, t_label_lengths = torch.tensor(lengths), torch.tensor(label_lengths)
    return (lambda: F.ctc_loss(labels, m_logits, lengths, label_lengths),
            lambda: TF.ctc_loss(t_logits.log_softmax(-1).transpose(0, 1), t_labels, t_lengths,
                                t_label_lengths, reduction='none'))


CASES = {
    'conv2d W2 1->6 5x5 same, 64x28x28': lambda: conv2d_case(64, 28, 1, 6, 5, 1, 2, False),
    'conv2d W3 3->16 3x3 same, 64x32x32': lambda: conv2d_case(64, 32, 3, 16, 3, 1, 1, False),
    'conv2d W3 16->16 3x3 same, 64x32x32': lambda: conv2d_case(64, 32, 16, 16, 3, 1, 1, True),
    'conv2d W4 3->64 11x11/4, 8x224x224': lambda: conv2d_case(8, 224, 3, 64, 11, 4, 2, False),
    'max_pool2d W4 3x3/2, 8x64x55x55': max_pool_case,
    'batch_norm W3 train, 64x16x32x32': batch_norm_case,
    'lstm W5 layer 1, 16x100x161 -> 256': lambda: lstm_case(16, 100, 161, 256),
    'lstm W6, 32x50x32 -> 128': lambda: lstm_case(32, 50, 32, 128),
    'ctc W5, 16x100x29, labels 20': ctc_case,
}


def forward_backward(forward):
    def step():
        forward().sum().backward()
    return step


def time_rows(framework, steps, warmup, only):
    """Yield ``(row name, timing)`` of every row (containing ``only``) for one framework."""
    side = 0 if framework == 'minidl' else 1
    for name, make in CASES.items():
        if only in name:
            yield name, time_steps(forward_backward(make()[side]), steps, warmup)


def _rows_in_child(framework, args):
    command = [sys.executable, '-m', 'benchmarks.kernels', '--framework', framework,
               '--steps', str(args.steps), '--warmup', str(args.warmup), '--only', args.only]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f'the {framework} timing process failed (exit {done.returncode})')
    return dict(json.loads(line) for line in done.stdout.splitlines())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=20)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--only', default='', help='run the rows whose name contains this')
    parser.add_argument('--json', help='also append one JSON line per row to this file')
    parser.add_argument('--framework', choices=('minidl', 'torch'),
                        help='time one framework in this process; print JSON lines')
    args = parser.parse_args(argv)
    torch.set_num_threads(len(os.sched_getaffinity(0)) if args.framework == 'torch' else 1)
    if args.framework:
        for row in time_rows(args.framework, args.steps, args.warmup, args.only):
            print(json.dumps(row), flush=True)
        return
    theirs, mine = _rows_in_child('torch', args), _rows_in_child('minidl', args)
    print(f"{'kernel (forward + backward)':40s} {'minidl ms':>10s} {'torch ms':>10s} "
          f"{'ratio':>6s} {'foreign cpu %':>14s}")
    for name, ours in mine.items():
        reference = theirs[name]
        ratio = ours['median_ms'] / reference['median_ms']
        foreign = max(ours['foreign_cpu_pct'], reference['foreign_cpu_pct'])
        print(f"{name:40s} {ours['median_ms']:10.2f} {reference['median_ms']:10.2f} "
              f"{ratio:6.2f} {foreign:14.1f}", flush=True)
        if args.json:
            with open(args.json, 'a') as out:
                out.write(json.dumps({'kernel': name, 'minidl': ours, 'torch': reference,
                                      'ratio': ratio}) + '\n')


if __name__ == '__main__':
    main()
