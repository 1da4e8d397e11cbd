"""W0 sgemm: C = A @ B on float32 2048x2048 matrices, the machine's compute ceiling.

Measured through numpy (OpenBLAS, minidl's CPU backend) and through
``torch.mm(a, b, out=c)``, each with 1 and 2 threads. OpenBLAS reads its
thread count when it loads, so each numpy measurement runs in a child
process started with ``OPENBLAS_NUM_THREADS`` set. Always on the CPU.

    python -m benchmarks.workloads.w0_sgemm STEPS WARMUP   # numpy, prints one JSON dict
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from benchmarks.common import time_steps

ID, NAME, SIZE = 'W0', 'sgemm', 2048
GFLOP = 2 * SIZE ** 3 / 1e9
THREADS = (1, 2)


def _matrices():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((SIZE, SIZE), dtype=np.float32),
            rng.standard_normal((SIZE, SIZE), dtype=np.float32))


def _numpy_timing(steps, warmup):
    a, b = _matrices()
    c = np.empty_like(a)
    return time_steps(lambda: np.matmul(a, b, out=c), steps, warmup)


def _numpy_in_child(threads, steps, warmup):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    done = subprocess.run([sys.executable, '-m', __name__, str(steps), str(warmup)], env=env,
                          cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def _torch_timing(threads, steps, warmup):
    a, b = (torch.from_numpy(m) for m in _matrices())
    c = torch.empty_like(a)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return time_steps(lambda: torch.mm(a, b, out=c), steps, warmup)
    finally:
        torch.set_num_threads(before)


def measure(frameworks, steps, warmup):
    """Yield ``(framework, threads, timing)`` with GFLOP/s added to each timing."""
    for threads in THREADS:
        for framework in frameworks:
            if framework == 'minidl':
                timing = _numpy_in_child(threads, steps, warmup)
            else:
                timing = _torch_timing(threads, steps, warmup)
            timing['gflops_median'] = GFLOP / (timing['median_ms'] / 1e3)
            timing['gflops_best'] = GFLOP / (timing['min_ms'] / 1e3)
            yield framework, threads, timing


if __name__ == '__main__':
    print(json.dumps(_numpy_timing(int(sys.argv[1]), int(sys.argv[2]))))
