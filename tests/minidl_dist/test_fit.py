"""Data-parallel fit, evaluate and predict under mpirun, against one process.

One launch per configuration checks several things at once: the worker
(scripts/fit_worker.py) trains, evaluates and predicts, and reports from
every rank. The reference is plain minidl without minidl_dist.
"""

import numpy as np
import pytest

from tests.minidl_dist.launch import launch, results


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    directory = tmp_path_factory.mktemp('reference')
    launch('fit_worker.py', 'reference', directory).check()
    return results(directory, 1)[0], np.load(directory / 'weights.npz')


@pytest.mark.parametrize('ranks', [2, 4])
def test_plain_fit_matches_one_process_and_only_rank_0_writes(tmp_path, reference, ranks):
    expected, expected_weights = reference
    run = launch('fit_worker.py', 'plain', tmp_path, ranks=ranks).check()
    outputs = results(tmp_path, ranks)
    # The same bits on every rank.
    assert len({output['digest'] for output in outputs}) == 1
    assert all(output == outputs[0] for output in outputs)
    got = outputs[0]
    # Before training: exact global evaluate and ordered predict (rounding of the sums only).
    assert got['evaluate_initial'][1] == expected['evaluate_initial'][1]
    assert got['evaluate_initial'][0] == pytest.approx(expected['evaluate_initial'][0], rel=1e-6)
    np.testing.assert_allclose(got['predict_initial'], expected['predict_initial'], atol=1e-6)
    np.testing.assert_allclose(got['predict_on_batch_initial'],
                               expected['predict_on_batch_initial'], atol=1e-6)
    # Training: the same global batches (SyncBatchNormalization: the same statistics).
    weights = np.load(tmp_path / 'weights.npz')
    for name in expected_weights:
        np.testing.assert_allclose(weights[name], expected_weights[name], atol=2e-4, rtol=1e-4)
    for key, values in expected['history'].items():
        assert got['history'][key] == pytest.approx(values, rel=1e-4), key
    assert got['evaluate'] == pytest.approx(expected['evaluate'], rel=1e-4)
    np.testing.assert_allclose(got['predict'], expected['predict'], atol=1e-4)
    np.testing.assert_allclose(got['predict_three'], expected['predict'][:3], atol=1e-4)
    # Only rank 0 printed progress and wrote files.
    assert run.stdout.count('Epoch 1/3') == 1 and run.stdout.count('Epoch 3/3') == 1
    written = sorted(path.name for path in tmp_path.iterdir() if path.suffix in ('.csv', '.h5'))
    assert written == ['checkpoint_rank0.h5', 'log_rank0.csv', 'model_rank0.h5']


def test_invariant_mode_gives_the_same_bits_on_1_2_and_4_ranks(tmp_path):
    outputs = {}
    for ranks in (None, 2, 4):  # None: a plain single process
        directory = tmp_path / str(ranks)
        directory.mkdir()
        launch('fit_worker.py', 'invariant', directory, ranks=ranks).check()
        outputs[ranks] = results(directory, ranks or 1)
    single = outputs[None][0]
    for ranks in (2, 4):
        for output in outputs[ranks]:
            assert output['digest'] == single['digest'], f'{ranks} ranks'
            assert output['history']['loss'] == pytest.approx(single['history']['loss'], rel=1e-12)
            # Inference runs on each rank's part of a batch; matrix products on
            # fewer rows may round differently, so predictions agree to rounding.
            np.testing.assert_allclose(output['predict'], single['predict'], atol=1e-6)
    weights = np.load(tmp_path / '4' / 'weights.npz')
    assert np.array_equal(np.concatenate([w.ravel() for w in weights.values()]),
                          np.concatenate([w.ravel() for w in
                                          np.load(tmp_path / 'None' / 'weights.npz').values()]))
    # Training happened: the weights moved and the loss fell.
    assert single['history']['loss'][-1] < single['history']['loss'][0]
