"""Shared by every benchmark: steps timed alone, machine noise, synthetic data."""

import os
import statistics
import time

import numpy as np


def cpu_jiffies():
    """(busy jiffies of the whole machine, jiffies used by this process)."""
    with open('/proc/stat') as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    with open('/proc/self/stat') as own:
        values = own.read().rsplit(')', 1)[1].split()
    return sum(fields[:8]) - idle, int(values[11]) + int(values[12])  # utime + stime


def time_steps(step, steps=20, warmup=3):
    """Run ``step`` ``warmup`` times untimed, then ``steps`` times each timed alone.

    Returns:
        dict with median/min/max/mean milliseconds per step and
        ``foreign_cpu_pct``: the share of the machine's CPUs that other
        processes used meanwhile (a line above ~5 % was measured under load).
    """
    for _ in range(warmup):
        step()
    busy_before, own_before = cpu_jiffies()
    wall_before = time.perf_counter()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    wall = time.perf_counter() - wall_before
    busy_after, own_after = cpu_jiffies()
    ticks = os.sysconf('SC_CLK_TCK')
    capacity = wall * ticks * (os.cpu_count() or 1)
    foreign = max(0, (busy_after - busy_before) - (own_after - own_before))
    ms = [t * 1e3 for t in times]
    return {
        'median_ms': statistics.median(ms), 'min_ms': min(ms), 'max_ms': max(ms),
        'mean_ms': statistics.fmean(ms),
        'foreign_cpu_pct': round(100 * foreign / capacity, 1) if capacity else 0.0,
    }


def synthetic_batch(batch, shape, classes):
    """The workloads' data: standard-normal float32 inputs, then int64 labels.

    Both come from one ``numpy.random.default_rng(0)``, inputs first, so
    every framework sees the same batch. Images are NCHW.
    """
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, *shape), dtype=np.float32)
    y = rng.integers(0, classes, size=(batch,), dtype=np.int64)
    return x, y
