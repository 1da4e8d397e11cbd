"""Where a minidl step's wall time goes, per op kind, forward and backward apart.

    python -m benchmarks.profile W3 W5 W6 --steps 5
    python -m benchmarks.profile W6 --mode train --torch

An op kind is the topic of a :class:`minidl.Function`: the module under
``minidl/functions/`` that defines its class (conv, normalization, lstm, ...).
'optimizer' is ``Optimizer.apply_gradients``; 'other' is the rest of the step
(``Function.__call__``, the autograd engine's walk, loss bookkeeping, Python).
While :func:`profiled` is active, the forward and backward of every Function
subclass and ``apply_gradients`` are wrapped to time each call; time is
attributed exclusively, so an op run inside another op counts for itself
only. Only the thread that entered :func:`profiled` is timed: work an op hands
to other threads counts inside that op.

Each workload is built and fed as ``python -m benchmarks`` does
(:mod:`benchmarks.runner`), on the CPU. Beside each table is the median step
time without the wrappers, so the cost of profiling shows. ``--torch`` adds
PyTorch's step of the same workload, profiled by ``torch.profiler``: its ten
costliest operators by self time.
"""

import argparse
import contextlib
import functools
import inspect
import statistics
import threading
from collections import defaultdict
from time import perf_counter

import torch

from benchmarks import workloads
from benchmarks.common import time_steps
from benchmarks.runner import MODES, minidl_steps, torch_steps
from minidl import Function
from minidl.optimizers import Optimizer

TOPIC_PACKAGE = 'minidl.functions.'


@functools.cache
def op_kind(function_class):
    """The topic of a Function class: its module's name under minidl.functions, else the
    full module name (a Function defined elsewhere)."""
    module = function_class.__module__
    return module[len(TOPIC_PACKAGE):] if module.startswith(TOPIC_PACKAGE) else module


def _class_tree(base):
    """``base`` and all its subclasses, each once."""
    found, pending = [], [base]
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.append(cls)
            pending.extend(cls.__subclasses__())
    return found


class Clock:
    """Exclusive wall time per kind, summed over the calls made on one thread."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self._open = []  # per unfinished call: [kind, seconds spent in nested timed calls]
        self._thread = threading.get_ident()

    def timed(self, method, kind_of):
        """``method`` wrapped to add its exclusive time to ``kind_of(self_argument)``."""
        @functools.wraps(method)
        def wrapper(obj, *args, **kwargs):
            if threading.get_ident() != self._thread:
                return method(obj, *args, **kwargs)
            call = [kind_of(obj), 0.0]
            self._open.append(call)
            start = perf_counter()
            try:
                return method(obj, *args, **kwargs)
            finally:
                elapsed = perf_counter() - start
                self._open.pop()
                self.seconds[call[0]] += elapsed - call[1]
                if self._open:
                    self._open[-1][1] += elapsed
        return wrapper


def _timed_methods():
    """(class, method name, kind_of) for every method the profile wraps."""
    for cls in _class_tree(Function):
        for name in ('forward', 'backward'):
            yield cls, name, lambda function, name=name: f'{op_kind(type(function))} {name}'
    for cls in _class_tree(Optimizer):
        yield cls, 'apply_gradients', lambda optimizer: 'optimizer'


@contextlib.contextmanager
def profiled():
    """Context manager timing ops and optimizer updates; yields the :class:`Clock`.

    The original methods are put back on exit, even after an exception.
    """
    clock, originals = Clock(), []
    try:
        for cls, name, kind_of in _timed_methods():
            method = vars(cls).get(name)
            if inspect.isfunction(method):  # only where the class itself defines it
                originals.append((cls, name, method))
                setattr(cls, name, clock.timed(method, kind_of))
        yield clock
    finally:
        for cls, name, method in reversed(originals):
            setattr(cls, name, method)


def profile_step(step, steps, warmup=0):
    """Run ``step`` ``warmup`` times untimed, then ``steps`` times under :func:`profiled`.

    Returns:
        dict: ``ms`` (kind -> milliseconds per step, 'other' included),
        ``step_ms`` (mean step time under the profiler, the sum of ``ms``)
        and ``median_ms`` (median profiled step time).
    """
    for _ in range(warmup):
        step()
    times = []
    with profiled() as clock:
        for _ in range(steps):
            start = perf_counter()
            step()
            times.append(perf_counter() - start)
    ms = {kind: 1e3 * seconds / steps for kind, seconds in clock.seconds.items()}
    step_ms = 1e3 * sum(times) / steps
    ms['other'] = step_ms - sum(ms.values())
    return {'ms': ms, 'step_ms': step_ms, 'median_ms': 1e3 * statistics.median(times)}


def shares(ms, step_ms):
    """``[(kind, ms per step, % of the step)]``, costliest first."""
    return [(kind, value, 100 * value / step_ms)
            for kind, value in sorted(ms.items(), key=lambda item: -item[1])]


def torch_profile_step(step, steps, top=10):
    """PyTorch's counterpart of :func:`profile_step`: the ``top`` operators by self time,
    the rest of them as 'other operators', and the time outside any operator as 'other'."""
    times = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            start = perf_counter()
            step()
            times.append(perf_counter() - start)
    events = sorted(profiler.key_averages(), key=lambda event: -event.self_cpu_time_total)
    ms = {event.key: event.self_cpu_time_total / 1e3 / steps for event in events[:top]}
    ms['other operators'] = sum(event.self_cpu_time_total for event in events[top:]) / 1e3 / steps
    step_ms = 1e3 * sum(times) / steps
    ms['other'] = step_ms - sum(ms.values())
    return {'ms': ms, 'step_ms': step_ms, 'median_ms': 1e3 * statistics.median(times)}


def _cpu_model():
    with open('/proc/cpuinfo') as info:
        names = [line.split(':', 1)[1].strip() for line in info if line.startswith('model name')]
    return f'{names[0] if names else "unknown CPU"}, {len(names)} cores'


def _table(title, profile, plain):
    lines = [f'### {title}', '', '| kind | ms per step | share of step % |', '|---|---:|---:|']
    lines += [f'| {kind} | {ms:.2f} | {share:.1f} |'
              for kind, ms, share in shares(profile['ms'], profile['step_ms'])]
    lines += [f"| **step (profiled mean)** | **{profile['step_ms']:.2f}** | 100.0 |", '',
              f"Median step: {plain['median_ms']:.2f} ms without the profiler, "
              f"{profile['median_ms']:.2f} ms with it "
              f"(other processes used {plain['foreign_cpu_pct']:.1f} % of the CPUs).", '']
    return '\n'.join(lines)


def _profile_workload(workload_id, modes, steps, warmup, with_torch):
    workload = workloads.load(workload_id)
    x, y = workload.data()
    builders = [('minidl', minidl_steps, profile_step)]
    if with_torch:
        builders.append(('PyTorch', torch_steps, torch_profile_step))
    for framework, build, profile in builders:
        mode_steps, _ = build(workload, x, y, 'cpu')
        for mode in modes:
            prepare, step = mode_steps[mode]
            if prepare is not None:
                prepare()
            plain = time_steps(step, steps, warmup)  # also warms up the profiled run
            title = (f'{workload.ID} {workload.NAME}, {mode}, {framework} '
                     f'(batch {workload.BATCH}, {steps} steps; {_cpu_model()})')
            print(_table(title, profile(step, steps), plain), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.profile',
                                     description=__doc__.splitlines()[0])
    networks = [workload_id for workload_id in workloads.MODULES if workload_id != 'W0']
    parser.add_argument('workloads', nargs='+', type=str.upper, choices=networks,
                        metavar='WORKLOAD', help=f'one or more of {", ".join(networks)}')
    parser.add_argument('--steps', type=int, default=5, help='profiled steps (default 5)')
    parser.add_argument('--warmup', type=int, default=2, help='untimed steps first (default 2)')
    parser.add_argument('--mode', choices=('train', 'inference', 'both'), default='both')
    parser.add_argument('--torch', action='store_true', help="also profile PyTorch's step")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        parser.error(f'--steps must be >= 1 and --warmup >= 0, got {args.steps}, {args.warmup}')
    torch.set_num_threads(2)  # as python -m benchmarks
    modes = MODES if args.mode == 'both' else (args.mode,)
    for workload_id in args.workloads:
        _profile_workload(workload_id, modes, args.steps, args.warmup, args.torch)


if __name__ == '__main__':
    main()
