"""Asynchronous and stale-synchronous SGD (``dist.AsyncOptimizer``) under mpirun.

scripts/async_worker.py trains on scikit-learn's digits with a parameter
server on rank 0 and one or two workers. Checked against independent
truths: a second launch (seeded runs replay bit for bit), plain one-process
SGD (one worker is sequential SGD), and a numpy re-computation of the
server's momentum updates in the order the seed fixes.
"""

import numpy as np
import pytest

from tests.minidl_dist.launch import launch, results

pytest.importorskip('mpi4py')
pytest.importorskip('sklearn')

from minidl_dist.async_schedule import epoch_rng, seeded_order  # noqa: E402

FIRST = ['digits_async_free', 'digits_async_seeded', 'digits_stale_seeded',
         'digits_stale_free_slow', 'digits_async_free_slow', 'softmax_async_seeded',
         'softmax_stale_seeded', 'digits_bn_dropout_seeded']
REPLAY = ['digits_async_seeded', 'digits_stale_seeded', 'digits_async_seeded_other_seed',
          'digits_bn_dropout_seeded']


@pytest.fixture(scope='module')
def first(tmp_path_factory):
    directory = tmp_path_factory.mktemp('async3')
    launch('async_worker.py', directory, *FIRST, ranks=3, timeout=240).check()
    return directory, results(directory, 3)


def test_seeded_runs_replay_bit_for_bit(first, tmp_path):
    _, before = first
    launch('async_worker.py', tmp_path, *REPLAY, ranks=3, timeout=180).check()
    again = results(tmp_path, 3)
    for name in ('digits_async_seeded', 'digits_stale_seeded', 'digits_bn_dropout_seeded'):
        for rank in range(3):
            assert again[rank][name]['digest'] == before[0][name]['digest'], (name, rank)
            assert again[rank][name]['loss'] == before[0][name]['loss']
    # The seed decides: another seed, another order, other weights.
    assert again[0]['digits_async_seeded_other_seed']['digest'] != \
        again[0]['digits_async_seeded']['digest']


def test_free_running_modes_train_and_end_with_one_model(first):
    _, outputs = first
    for name in ('digits_async_free', 'digits_stale_free_slow', 'digits_async_free_slow',
                 'digits_async_seeded', 'digits_stale_seeded'):
        assert len({output[name]['digest'] for output in outputs}) == 1, name
        assert 'fit only' in outputs[0][name]['train_on_batch']
        loss = outputs[0][name]['loss']
        assert loss[-1] < 0.5 * loss[0], (name, loss)
        assert outputs[0][name]['accuracy'] > 0.75, name  # chance: 0.1
        assert outputs[0][name]['counters']['updates'] == 3 * 23 * 2  # epochs x steps x workers


def test_moving_statistics_and_dropout_end_as_one_model(first):
    _, outputs = first
    assert len({output['digits_bn_dropout_seeded']['digest'] for output in outputs}) == 1
    assert outputs[0]['digits_bn_dropout_seeded']['accuracy'] > 0.75


def test_staleness_bound_holds_and_binds(first):
    _, outputs = first
    # The last worker sleeps 30 ms per batch: free-running, the other runs far ahead.
    assert outputs[0]['digits_async_free_slow']['counters']['max_lead'] > 3
    assert outputs[0]['digits_stale_free_slow']['counters']['max_lead'] == 1  # the bound
    assert outputs[0]['digits_stale_seeded']['counters']['max_lead'] <= 2
    assert outputs[1]['digits_stale_free_slow']['counters'] == {}  # workers keep none


def softmax_reference(initial, staleness, momentum=0.9):
    """The server's updates recomputed in float64 numpy, in the seeded order of updates.

    Softmax regression on the first 240 digits, batches of 40 in order, each
    cut in two blocks of 20 (one per worker); SGD with Keras's momentum on
    the server. A worker computes its next gradient on the weights the
    server answered it with: at once ('async'), or once it is at most
    ``staleness`` gradients ahead of the other worker.
    """
    from tests.minidl_dist.scripts.async_worker import load
    (x, y), _ = load(240)
    x, y = x.astype(np.float64), y.astype(np.float64)
    kernel, bias = (array.astype(np.float64) for array in initial)
    velocity = [np.zeros_like(kernel), np.zeros_like(bias)]
    updates = 0
    for _ in range(2):  # epochs
        order = seeded_order(epoch_rng(3, updates), 2, 6, staleness)
        held = [(kernel.copy(), bias.copy()) for _ in range(2)]
        done, waiting = [0, 0], set()
        for worker in order:
            rows = slice(40 * done[worker] + 20 * worker, 40 * done[worker] + 20 * worker + 20)
            k, b = held[worker]
            logits = x[rows] @ k + b
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            error = (p - y[rows]) / 20  # the block's mean cross-entropy
            for slot, (param, grad) in enumerate(((kernel, x[rows].T @ error),
                                                  (bias, error.sum(axis=0)))):
                velocity[slot] = momentum * velocity[slot] - 0.1 * grad
                param += velocity[slot]
            updates += 1
            done[worker] += 1
            waiting.add(worker)
            for other in sorted(waiting):
                if staleness is None or done[other] - min(done) <= staleness:
                    waiting.discard(other)
                    held[other] = (kernel.copy(), bias.copy())
    return kernel, bias


@pytest.mark.parametrize('name, staleness', [('softmax_async_seeded', None),
                                             ('softmax_stale_seeded', 1)])
def test_server_momentum_matches_numpy(first, name, staleness):
    directory, _ = first
    initial = list(np.load(directory / f'{name}-initial.npz').values())
    final = list(np.load(directory / f'{name}.npz').values())
    expected = softmax_reference(initial, staleness)
    for got, want in zip(final, expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    without_momentum = softmax_reference(initial, staleness, momentum=0.0)
    assert np.abs(final[0] - without_momentum[0]).max() > 1e-2  # the test tells them apart


def test_one_worker_is_plain_sgd(tmp_path):
    """With 2 ranks (a server and one worker) the run is one process's SGD, bit for bit."""
    launch('async_worker.py', tmp_path, 'digits_async_free', ranks=2, timeout=120).check()
    outputs = results(tmp_path, 2)
    from minidl.optimizers import SGD
    from tests.minidl_dist.scripts.async_worker import build, load
    (x, y), _ = load()
    model = build('mlp', 11)
    model.compile(SGD(0.05, momentum=0.9), 'categorical_crossentropy', metrics=['accuracy'])
    history = model.fit(x, y, batch_size=64, epochs=3, verbose=0)
    got = list(np.load(tmp_path / 'digits_async_free.npz').values())
    for plain, served in zip(model.get_weights(), got):
        assert np.array_equal(plain, served)
    assert outputs[0]['digits_async_free']['loss'] == pytest.approx(history.history['loss'])
