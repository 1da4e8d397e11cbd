"""Hybrid parallelism: model-parallel Dense layers against numpy, data parallelism, one process."""

import json

import numpy as np
import pytest

from tests.minidl_dist.launch import launch, results

h5py = pytest.importorskip('h5py')
WORKER = 'hybrid_worker.py'
# Adam, 3 epochs of 6 steps: the runs differ only in the order of float32 sums
# (measured: 1.3e-6 hybrid, 4.5e-7 data-parallel, against one process).
WEIGHT_TOLERANCE = 1e-5


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """Output directories of the fit runs: 'reference' (one process), 'data-2', 'hybrid-2',
    'hybrid-4'."""
    directories = {}
    for name, ranks in [('reference', None), ('data-2', 2), ('hybrid-2', 2), ('hybrid-4', 4)]:
        directory = directories[name] = tmp_path_factory.mktemp(name)
        launch(WORKER, f'fit-{name.split("-")[0]}', directory, ranks=ranks).check()
    return directories


def _weights(directory, name='weights.npz'):
    arrays = np.load(directory / name)
    return [arrays[key] for key in arrays.files]


def _result(directory):
    return json.loads((directory / 'result.json').read_text())


@pytest.mark.parametrize('ranks', [2, 4])
def test_sharded_dense_forward_and_gradients_equal_the_whole_layer(tmp_path, ranks):
    launch(WORKER, 'functions', tmp_path, ranks=ranks).check()
    for errors in results(tmp_path, ranks):
        # float64: the column shards reproduce numpy's products of the global batch.
        for name, error in errors.items():
            assert error < 1e-12, name


@pytest.mark.parametrize('name', ['hybrid-2', 'hybrid-4'])
def test_hybrid_fit_equals_data_parallel_and_one_process(runs, name):
    reference, hybrid = _weights(runs['reference']), _weights(runs[name])
    assert [w.shape for w in hybrid] == [w.shape for w in reference]  # gathered: Keras's layout
    for ours, theirs in zip(hybrid, reference):
        np.testing.assert_allclose(ours, theirs, atol=WEIGHT_TOLERANCE)
    for ours, theirs in zip(hybrid, _weights(runs['data-2'])):
        np.testing.assert_allclose(ours, theirs, atol=WEIGHT_TOLERANCE)
    ours, theirs = _result(runs[name]), _result(runs['reference'])
    np.testing.assert_allclose(ours['loss'], theirs['loss'], rtol=1e-6)
    np.testing.assert_allclose(ours['evaluate'], theirs['evaluate'], rtol=1e-5)
    np.testing.assert_allclose(np.load(runs[name] / 'predictions.npy'),
                               np.load(runs['reference'] / 'predictions.npy'), atol=1e-5)
    assert ours['count_params'] == theirs['count_params'] == 380


def test_summary_shows_each_layers_placement(runs):
    lines = _result(runs['hybrid-4'])['summary']
    placement = {line.split()[0]: line.split()[-1] for line in lines
                 if line.split() and line.split()[0] in ('conv2d', 'fc1', 'predictions')}
    # Rank 0's view: its share of each model-parallel layer's columns.
    assert placement == {'conv2d': 'data-parallel', 'fc1': '0:4/16', 'predictions': '0:1/4'}
    assert 'Total params: 380' in lines


def test_a_file_saved_on_4_ranks_loads_in_one_process(runs):
    from minidl.models import load_model
    model = load_model(str(runs['hybrid-4'] / 'model.h5'))
    for ours, theirs in zip(model.get_weights(), _weights(runs['hybrid-4'])):
        np.testing.assert_array_equal(ours, theirs)
    # ModelCheckpoint saves through the same gathering, after the last epoch here.
    checkpoint = load_model(str(runs['hybrid-4'] / 'checkpoint.h5'))
    for ours, theirs in zip(checkpoint.get_weights(), _weights(runs['hybrid-4'])):
        np.testing.assert_array_equal(ours, theirs)
    # The optimizer's state is gathered too: Adam's moments have the weights' shapes.
    with h5py.File(runs['hybrid-4'] / 'model.h5', 'r') as file, \
            h5py.File(runs['reference'] / 'model.h5', 'r') as reference:
        shapes, expected = _dataset_shapes(file['optimizer_weights']), \
            _dataset_shapes(reference['optimizer_weights'])
    assert shapes == expected and len(shapes) > 2


def _dataset_shapes(group):
    shapes = {}

    def visit(key, item):  # returns None, so that h5py visits every item
        if isinstance(item, h5py.Dataset):
            shapes[key] = item.shape
    group.visititems(visit)
    return shapes


@pytest.mark.parametrize('ranks', [2, 4])
def test_a_file_saved_by_one_process_loads_on_n_ranks_and_trains_on(runs, tmp_path, ranks):
    from minidl.models import load_model
    file = runs['reference'] / 'model.h5'
    launch(WORKER, 'load', tmp_path, file, ranks=ranks).check()
    saved = _weights(runs['reference'])
    for placed, loaded, original in zip(_weights(tmp_path, 'placed.npz'),
                                        _weights(tmp_path, 'loaded.npz'), saved):
        np.testing.assert_array_equal(placed, original)
        np.testing.assert_array_equal(loaded, original)
    # One more epoch from the saved Adam state, here in one process.
    import tests.minidl_dist.scripts.hybrid_worker as worker
    model = load_model(str(file))
    x, y = worker.data(96, 0)
    model.fit(x, y, batch_size=worker.BATCH, epochs=1, shuffle=False, verbose=0)
    for ours, theirs in zip(_weights(tmp_path, 'trained.npz'), model.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=WEIGHT_TOLERANCE)


def test_bad_model_parallel_arguments_fail_at_compile(tmp_path):
    launch(WORKER, 'errors', tmp_path, ranks=4).check()
    messages = json.loads((tmp_path / 'errors.json').read_text())
    assert "names ['fc9'], which model" in messages['missing']
    assert "its Dense layers are ['fc1', 'predictions']" in messages['missing']
    assert 'is a Flatten; only Dense layers can be split' in messages['not_dense']
    assert "'fc1' has 6 units, which 4 ranks cannot share evenly" in messages['indivisible']
    assert "'dense' or a list of layer names" in messages['string']
    assert "'dense' or a list of layer names" in messages['number']
    assert 'each layer once' in messages['repeated']
    assert "layers ['fc1', 'predictions']); its weights are shards" in messages['recompiled']
    assert "'fc1' (a model-parallel layer or one after it) has a weight or activity penalty" \
        in messages['penalty']


def test_invariant_mode_with_model_parallel_layers_gives_the_same_bits_on_1_2_and_4_ranks(
        tmp_path):
    outputs = []
    for ranks in (1, 2, 4):
        directory = tmp_path / str(ranks)
        directory.mkdir()
        launch(WORKER, 'invariant', directory, ranks=ranks).check()
        outputs.append(json.loads((directory / 'invariant.json').read_text()))
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
    assert outputs[0]['loss'][-1] < outputs[0]['loss'][0]  # it trains
