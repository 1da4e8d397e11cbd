"""Worker threads: tasks run on several threads, in fixed blocks, with bitwise the same results."""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import minidl
from minidl.compute import blas_threads, pool, threads

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _blas_threads():
    return [library['num_threads'] for library in threadpool_info()
            if library['user_api'] == 'blas']


def test_results_come_back_in_task_order_from_two_threads(two_threads):
    barrier = threading.Barrier(2, timeout=10)

    def task(k):
        if k in (0, 3):  # the first task of each group: both groups must run at once
            barrier.wait()
        return k, threading.get_ident()

    results = pool.run_tasks([lambda k=k: task(k) for k in range(6)])
    assert [k for k, _ in results] == list(range(6))
    idents = [ident for _, ident in results]
    assert idents[:3] == [threading.get_ident()] * 3  # the caller runs the first group
    assert len(set(idents[3:])) == 1 and idents[3] != idents[0]


def test_one_thread_runs_every_task_in_the_caller(monkeypatch):
    monkeypatch.setattr(minidl.config, 'num_threads', 1)
    assert pool.run_tasks([threading.get_ident] * 4) == [threading.get_ident()] * 4


def test_the_environment_sets_the_default(monkeypatch):
    monkeypatch.setenv('MINIDL_NUM_THREADS', '3')
    assert threads.num_threads() == 3
    monkeypatch.setattr(minidl.config, 'num_threads', 0)
    with pytest.raises(ValueError, match='at least 1'):
        threads.num_threads()


def test_tasks_of_another_array_module_run_in_the_caller(two_threads):
    not_numpy = object()
    assert pool.run_tasks([threading.get_ident] * 4, not_numpy) == \
        [threading.get_ident()] * 4


def test_nested_tasks_run_in_their_thread(two_threads):
    def outer():
        return pool.run_tasks([threading.get_ident] * 2)

    for inner in pool.run_tasks([outer, outer]):
        assert inner[0] == inner[1]


def test_an_error_is_raised_after_every_task_has_finished(two_threads):
    done = []

    def slow():
        threading.Event().wait(0.2)
        done.append('slow')

    def fail():
        raise KeyError('boom')

    with pytest.raises(KeyError, match='boom'):
        pool.run_tasks([fail, slow])
    assert done == ['slow']


def test_a_call_from_another_thread_meanwhile_runs_its_tasks_itself(two_threads):
    # The workers serve one call at a time; a second thread's call made meanwhile runs its
    # tasks in order in its own thread, with the same results.
    inside, release = threading.Event(), threading.Event()

    def hold():
        inside.set()
        assert release.wait(10)
        return 'held'

    first = []
    caller = threading.Thread(target=lambda: first.append(
        pool.run_tasks([lambda: 'caller', hold])))
    caller.start()
    assert inside.wait(10)  # the worker is busy with the first call
    results = pool.run_tasks([(lambda k=k: (k, threading.get_ident())) for k in range(4)])
    assert [k for k, _ in results] == [0, 1, 2, 3]
    assert {ident for _, ident in results} == {threading.get_ident()}
    release.set()
    caller.join(10)
    assert first == [['caller', 'held']]
    assert pool.run_tasks([lambda: 1, lambda: 2]) == [1, 2]  # the workers serve again


def test_a_base_exception_in_a_workers_task_reaches_the_caller(two_threads):
    def leave():
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        pool.run_tasks([lambda: 1, leave])
    assert pool.run_tasks([lambda: 1, lambda: 2]) == [1, 2]


def test_a_call_interrupted_while_a_worker_runs_leaves_the_pool_usable(two_threads):
    # Ctrl-C lands in the calling thread while a worker still runs its group: the call
    # ends with the interrupt, and that worker, which nobody waits for, leaves the pool.
    running, release, ran_on = threading.Event(), threading.Event(), []

    def slow():
        ran_on.append(threading.get_ident())
        running.set()
        release.wait(10)
        return 'late'

    def interrupted():
        assert running.wait(10)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pool.run_tasks([interrupted, slow])
    release.set()
    assert ran_on and ran_on[0] != threading.get_ident()
    assert ran_on[0] not in {worker.thread.ident for worker in pool._workers}
    assert pool.run_tasks([(lambda k=k: k) for k in range(4)]) == [0, 1, 2, 3]


def test_more_threads_make_more_workers(monkeypatch):
    monkeypatch.setattr(minidl.config, 'num_threads', 3)
    barrier = threading.Barrier(3, timeout=10)

    def task(k):
        barrier.wait()  # all three groups at once
        return k, threading.get_ident()

    results = pool.run_tasks([lambda k=k: task(k) for k in range(3)])
    assert [k for k, _ in results] == [0, 1, 2]
    assert len({ident for _, ident in results}) == 3
    blas_threads.blas.release()


def test_blas_is_held_to_one_thread_while_the_pool_is_on(monkeypatch):
    with threadpool_limits(2, user_api='blas'):
        before = _blas_threads()
        assert before and set(before) == {2}
        monkeypatch.setattr(minidl.config, 'num_threads', 2)
        inside = pool.run_tasks([_blas_threads, _blas_threads])
        assert inside == [[1] * len(before)] * 2
        assert _blas_threads() == [1] * len(before)  # between tasks too: nothing spins
        monkeypatch.setattr(minidl.config, 'num_threads', 1)
        pool.run_tasks([_blas_threads])
        assert _blas_threads() == before


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='needs fork')
def test_a_forked_child_gets_a_pool_of_its_own(two_threads):
    pool.run_tasks([lambda: None] * 2)  # the parent's worker thread exists
    child = os.fork()
    if child == 0:  # the child: the parent's workers are gone, so a new pool must start
        os._exit(0 if pool.run_tasks([lambda: 1] * 4) == [1] * 4 else 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    pytest.fail('the forked child hung on the parent\'s pool')


def test_row_blocks_cover_the_rows_in_order():
    array = np.zeros((10, 100), np.float32)  # 400 bytes a row
    blocks = pool.row_blocks(array, block_bytes=1200)
    assert blocks == [slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 10)]
    assert pool.row_blocks(array, block_bytes=10) == [slice(k, k + 1) for k in range(10)]
    assert pool.row_blocks(np.zeros((0, 4)), block_bytes=10) == []


SCRIPT = '''
import hashlib, sys, threading
import numpy as np
import minidl
from minidl import layers, models, optimizers
from minidl.compute import pool, products
from minidl.functions.conv import Conv2D

pool.BLOCK_BYTES = 16 << 10    # many blocks, chunks and cut products at these small sizes
products.SPLIT_PRODUCT = 1 << 16
Conv2D.CHUNK_BYTES = 64 << 10
used = set()
run_group = pool._run_group
def recording(tasks):
    used.add(threading.get_ident())
    return run_group(tasks)
pool._run_group = recording

minidl.set_seed(3)
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 16, 16, 3)).astype('float32')
y = rng.integers(0, 10, 64)
model = models.Sequential([
    layers.Conv2D(8, 3, padding='same', input_shape=(16, 16, 3)),
    layers.BatchNormalization(), layers.Activation('relu'),
    layers.Conv2D(16, 3, strides=2), layers.BatchNormalization(), layers.ReLU(),
    layers.Flatten(), layers.Dense(64, activation='relu'), layers.Dense(10)])
sequences = rng.standard_normal((64, 6, 5)).astype('float32')
recurrent = models.Sequential([  # two directions side by side, step products in chunks
    layers.Bidirectional(layers.LSTM(128, return_sequences=True), input_shape=(6, 5)),
    layers.Bidirectional(layers.GRU(8)), layers.Dense(10)])
digest = hashlib.sha256()
for model, inputs in [(model, x), (recurrent, sequences)]:
    model.compile(optimizers.SGD(0.05, momentum=0.9), 'sparse_categorical_crossentropy')
    model.fit(inputs, y, batch_size=32, epochs=2, verbose=0, shuffle=False)
    for weight in model.get_weights() + [model.predict(inputs)]:
        digest.update(np.ascontiguousarray(weight).tobytes())
print(digest.hexdigest(), len(used))
'''


def _train(thread_count):
    environment = {'MINIDL_NUM_THREADS': str(thread_count), 'PATH': '/usr/bin:/bin'}
    result = subprocess.run([sys.executable, '-c', SCRIPT], cwd=ROOT, env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    digest, used = result.stdout.split()
    return digest, int(used)


def test_training_gives_the_same_bits_on_one_and_two_threads_and_run_to_run():
    one, two, two_again = _train(1), _train(2), _train(2)
    assert one[1] == 0 and two[1] == 2  # one thread runs tasks inline; two really ran on two
    assert one[0] == two[0] == two_again[0]
