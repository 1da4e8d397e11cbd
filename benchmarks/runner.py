"""One workload in minidl and PyTorch: build, check, time, one result dict per line.

Both frameworks get the same numpy batch, converted to their own tensors
before timing (images transposed once to minidl's channels-last layout).
minidl runs through its Keras API: ``train_on_batch`` for a training step
(it returns the loss as a float, which reads it back to the host) and
``predict_on_batch`` for inference. PyTorch's training step is zero_grad,
forward, loss, backward, SGD step and ``loss.item()``; its inference runs in
eval mode under ``no_grad``.

Each framework is built and timed in a process of its own
(``python -m benchmarks.runner``, run by :func:`run_workload`), one after the
other: PyTorch's OpenMP threads and minidl's pool, OpenBLAS and oneDNN
threads then never share a process, so no framework's idle threads spin
into the other's time, and each starts with a clean heap.
"""

import json
import os
import subprocess
import sys
from torch.utils.flop_counter import FlopCounterMode

import numpy as np
import torch
import torch.nn.functional as TF

import minidl
from benchmarks.common import time_steps
from minidl import losses, optimizers

FRAMEWORKS = ('torch', 'minidl')  # PyTorch first, so minidl's line can carry the ratio
MODES = ('train', 'inference')

# PyTorch's cuDNN settings on the GPU. 'default' is PyTorch's own (TF32 allowed
# in convolutions, algorithms chosen by heuristics, not all deterministic);
# 'deterministic' matches what minidl does by default (deterministic
# algorithms, float32 math, no TF32); 'benchmark' lets cuDNN time algorithms.
TORCH_CUDNN = ('default', 'deterministic', 'benchmark')


def set_torch_cudnn(choice):
    """Apply one of :data:`TORCH_CUDNN` to this process's PyTorch."""
    if choice == 'deterministic':
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    elif choice == 'benchmark':
        torch.backends.cudnn.benchmark = True
    elif choice != 'default':
        raise ValueError(f'torch_cudnn must be one of {TORCH_CUDNN}, got {choice!r}')


def count_flops(step):
    """Floating-point operations of one call of ``step`` (a PyTorch step), by PyTorch's
    ``FlopCounterMode`` (matrix products and convolutions, forward and backward)."""
    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def _check_count(framework, workload, counted, expected):
    if counted != expected:
        raise RuntimeError(f'{workload.ID} {workload.NAME}: the {framework} model has {counted:,} '
                           f'parameters, expected {expected:,}')


def minidl_steps(workload, x, y, device):
    """``({mode: (prepare, step)}, parameter count)`` of the workload's minidl model."""
    minidl.set_seed(0)
    model = workload.minidl_model()
    loss = getattr(workload, 'minidl_loss', None) or \
        losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=optimizers.SGD(learning_rate=0.01, momentum=0.9), loss=loss)
    _check_count('minidl', workload, model.count_params(), workload.MINIDL_PARAMS)
    if x.ndim == 4:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # NCHW -> NHWC
    inputs, labels = minidl.Tensor(x, device=device), minidl.Tensor(y, device=device)
    steps = {'train': (None, lambda: model.train_on_batch(inputs, labels)),
             'inference': (None, lambda: model.predict_on_batch(inputs))}
    return steps, model.count_params()


def torch_steps(workload, x, y, device):
    """``({mode: (prepare, step)}, parameter count)`` of the workload's PyTorch model."""
    torch.manual_seed(0)
    device = 'cuda' if device == 'gpu' else 'cpu'
    model = workload.torch_model().to(device)
    count = sum(parameter.numel() for parameter in model.parameters())
    _check_count('torch', workload, count, workload.PARAMS)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_of = getattr(workload, 'torch_loss', TF.cross_entropy)
    inputs, labels = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)

    def train():
        optimizer.zero_grad()
        loss = loss_of(model(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    def inference():
        with torch.no_grad():
            logits = model(inputs)
        if device == 'cuda':
            torch.cuda.synchronize()
        return logits

    return {'train': (model.train, train), 'inference': (model.eval, inference)}, count


BUILDERS = {'minidl': minidl_steps, 'torch': torch_steps}


def time_framework(workload, framework, modes, device, steps, warmup, count=False):
    """``({mode: timing}, parameter count)`` of one framework, in this process.

    With ``count`` (PyTorch only), each timing also holds ``flop_per_step``.
    """
    x, y = workload.data()
    mode_steps, params = BUILDERS[framework](workload, x, y, device)
    timings = {}
    for mode in modes:
        prepare, step = mode_steps[mode]
        if prepare is not None:
            prepare()
        timings[mode] = time_steps(step, steps, warmup)
        if count and framework == 'torch':
            timings[mode]['flop_per_step'] = count_flops(step)
    return timings, params


def _time_in_child(workload, framework, modes, device, steps, warmup, torch_cudnn='default',
                   count=False):
    """:func:`time_framework` in a new Python process (see the module's docstring)."""
    command = [sys.executable, '-m', 'benchmarks.runner', workload.ID, framework, device,
               str(steps), str(warmup), ','.join(modes), torch_cudnn, str(int(count))]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f'{workload.ID} {framework}: the timing process failed '
                           f'(exit {done.returncode}); its error is printed above')
    timings, params = json.loads(done.stdout.splitlines()[-1])
    return timings, params


def run_workload(workload, frameworks, modes, device, steps, warmup, target=None,
                 torch_cudnn='default', count=False):
    """Yield one result dict per mode and framework (in FRAMEWORKS order per mode).

    Each framework is timed in a process of its own. The minidl line carries
    ``ratio`` (its median over PyTorch's) and the target when PyTorch ran too.
    With ``count`` and PyTorch, both lines carry ``flop_per_step`` and
    ``tflops``, the rate of that work at the line's median step.
    """
    modes = [mode for mode in MODES if mode in modes]
    measured = {name: _time_in_child(workload, name, modes, device, steps, warmup, torch_cudnn,
                                     count)
                for name in FRAMEWORKS if name in frameworks}
    for mode in modes:
        medians = {}
        flop = measured['torch'][0][mode].get('flop_per_step') if 'torch' in measured else None
        for name, (timings, params) in measured.items():
            timing = timings[mode]
            result = {'workload': workload.ID, 'name': workload.NAME, 'framework': name,
                      'mode': mode, 'device': device, 'batch': workload.BATCH,
                      'params': params, 'steps': steps, 'warmup': warmup, **timing,
                      'samples_per_s': workload.BATCH / (timing['median_ms'] / 1e3)}
            if device == 'gpu':
                result['torch_cudnn'] = torch_cudnn
            if flop is not None:
                result['flop_per_step'] = flop
                result['tflops'] = flop / (timing['median_ms'] / 1e3) / 1e12
            medians[name] = timing['median_ms']
            if name == 'minidl' and 'torch' in medians:
                result['ratio'] = medians['minidl'] / medians['torch']
                if target is not None:
                    result['target'] = target
                    result['meets_target'] = result['ratio'] <= target
            yield result


def run_sgemm(workload, frameworks, steps, warmup):
    """Yield W0's result dicts; minidl's line (numpy's matmul) carries the ratio."""
    torch_median = {}
    for name, threads, timing in workload.measure(
            [name for name in FRAMEWORKS if name in frameworks], steps, warmup):
        result = {'workload': workload.ID, 'name': workload.NAME, 'framework': name,
                  'mode': 'sgemm', 'device': 'cpu', 'threads': threads, 'steps': steps,
                  'warmup': warmup, **timing}
        if name == 'torch':
            torch_median[threads] = timing['median_ms']
        elif threads in torch_median:
            result['ratio'] = timing['median_ms'] / torch_median[threads]
        yield result


def _main(argv):
    """``python -m benchmarks.runner WORKLOAD FRAMEWORK DEVICE STEPS WARMUP MODES TORCH_CUDNN
    COUNT``: print ``[{mode: timing}, params]`` of :func:`time_framework` as one JSON line."""
    from benchmarks import workloads
    workload_id, framework, device, steps, warmup, modes, torch_cudnn, count = argv
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    set_torch_cudnn(torch_cudnn)
    if device == 'gpu':
        minidl.set_default_device('gpu')
    result = time_framework(workloads.load(workload_id), framework, modes.split(','), device,
                            int(steps), int(warmup), count=count == '1')
    print(json.dumps(result))


if __name__ == '__main__':
    _main(sys.argv[1:])
