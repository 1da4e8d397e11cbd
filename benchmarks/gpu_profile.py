"""Where minidl's GPU step goes: wall and CPU time per step, and cProfile's top calls.

    python -m benchmarks.gpu_profile            # W3 train (cuDNN on and off), Z2 train,
                                                # W3 inference
    python -m benchmarks.gpu_profile W4:train:auto Z2:inference:never

Each item is ``WORKLOAD:MODE:USE_CUDNN``. A step is timed synchronised (the
GPU has finished) over 10 steps after 5 untimed ones; wall time equal to CPU
time says the host, not the GPU, sets the pace. For training with cuDNN on,
cProfile then lists the 22 costliest functions of 5 steps by own time.
"""

import cProfile
import io
import pstats
import sys
import time

import minidl
from benchmarks import workloads
from benchmarks.runner import minidl_steps
from minidl import config
from minidl.compute.cuda import runtime

DEFAULT = ('W3:train:auto', 'W3:train:never', 'Z2:train:auto', 'W3:inference:auto')


def profile(item):
    """Print the timings (and for cuDNN-on training, the profile) of one item."""
    cupy = runtime.require_gpu()
    workload_id, mode, use_cudnn = item.split(':')
    config.use_cudnn = use_cudnn
    workload = workloads.load(workload_id.upper())
    x, y = workload.data()
    steps, _ = minidl_steps(workload, x, y, 'gpu')
    _, step = steps[mode]
    for _ in range(5):
        step()
    cupy.cuda.Device().synchronize()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(10):
        step()
    cupy.cuda.Device().synchronize()
    wall, cpu = (time.perf_counter() - wall) / 10, (time.process_time() - cpu) / 10
    print(f'== {item}: {wall * 1e3:.2f} ms per step, {cpu * 1e3:.2f} ms of CPU', flush=True)
    if mode == 'train' and use_cudnn != 'never':
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(5):
            step()
        cupy.cuda.Device().synchronize()
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats('tottime').print_stats(22)
        text = out.getvalue()
        print(text[text.find('ncalls'):], flush=True)


def main(argv=None):
    minidl.set_default_device('gpu')
    for item in (sys.argv[1:] if argv is None else argv) or DEFAULT:
        profile(item)


if __name__ == '__main__':
    main()
