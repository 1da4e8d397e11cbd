"""A scaling model of minidl_dist, and the measurements that check it (issue 31).

- :mod:`~benchmarks.scaling.pingpong`: latency and bandwidth of one message
  (shared memory, and TCP between fake hosts);
- :mod:`~benchmarks.scaling.model` and :mod:`~benchmarks.scaling.schemes`:
  step time and traffic of data-parallel, hybrid and model-averaging training;
- :mod:`~benchmarks.scaling.workloads`: W3, AlexNet and Deep Speech 2;
- :mod:`~benchmarks.scaling.measure` and :mod:`~benchmarks.scaling.sweep`:
  the measured cases (1, 2, 4 ranks and 2 hosts x 2 ranks);
- :mod:`~benchmarks.scaling.predict`: predictions against measurements, and
  the predicted efficiency from 1 to 1,024 workers (docs/scaling.md).
"""
