"""Reports how many threads BLAS runs on each rank: at start, after init, after a step.

Usage: blas_threads_worker.py OUTPUT_DIR, under mpirun. ``launch`` sets one
BLAS thread per rank in the environment; this job is about what BLAS gets
without that, so the settings are dropped before numpy loads OpenBLAS, which
then starts with its own default (every CPU). Each rank writes rank<r>.json.
"""

import os

for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS'):
    os.environ.pop(name, None)

import json  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info  # noqa: E402

import minidl  # noqa: E402
import minidl_dist as dist  # noqa: E402
from minidl.compute import threads  # noqa: E402
from minidl.layers import Conv2D, Dense, Flatten  # noqa: E402
from minidl.models import Sequential  # noqa: E402
from minidl.optimizers import SGD  # noqa: E402


def blas_threads():
    return [library['num_threads'] for library in threadpool_info()
            if library['user_api'] == 'blas']


def main(output):
    started = blas_threads()
    dist.init()
    after_init = blas_threads()
    minidl.set_seed(0)
    rng = np.random.default_rng(dist.rank())
    x = rng.standard_normal((32, 16, 16, 3), dtype=np.float32)
    y = rng.integers(0, 10, 32)
    model = Sequential([Conv2D(8, 3, activation='relu', input_shape=(16, 16, 3)),
                        Flatten(), Dense(10, activation='softmax')])
    model.compile(dist.DistributedOptimizer(SGD(0.01)), 'sparse_categorical_crossentropy')
    model.train_on_batch(x, y)
    pathlib.Path(output, f'rank{dist.rank()}.json').write_text(json.dumps({
        'started': started, 'after_init': after_init, 'after_step': blas_threads(),
        'share': threads.cpu_share(), 'pool': threads.num_threads(),
        'usable_cpus': len(os.sched_getaffinity(0))}))


if __name__ == '__main__':
    main(sys.argv[1])
