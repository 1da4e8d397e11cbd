"""minidl_dist's pieces in one plain process (a job of size 1): no mpirun needed."""

import numpy as np
import pytest

pytest.importorskip('mpi4py')

import minidl  # noqa: E402
import minidl_dist as dist  # noqa: E402
from minidl.layers import BatchNormalization, Dense, Dropout, Input  # noqa: E402
from minidl.models import Model, Sequential, load_model  # noqa: E402
from minidl.optimizers import SGD  # noqa: E402
from minidl_dist import data, model_parts, model_sync, watchdog  # noqa: E402
from minidl_dist.allreduce import PairwiseSum  # noqa: E402
from minidl_dist.randomness import PartStreams  # noqa: E402


def test_blocks_cover_the_batch_in_order_with_sizes_differing_by_at_most_one():
    bounds = data.block_bounds(10, 4)
    assert bounds == [(0, 2), (2, 5), (5, 7), (7, 10)]
    assert data.block_bounds(3, 4) == [(0, 0), (0, 1), (1, 2), (2, 3)]
    order = np.array([5, 1, 9, 3, 7])
    assert data.select(order, 1, 3).tolist() == [1, 9]
    assert data.select(slice(20, 30), 2, 5) == slice(22, 25)


def test_pairwise_sum_is_the_binary_tree_over_the_terms():
    terms = [np.array([1e8], np.float32), np.array([1.0], np.float32),
             np.array([-1e8], np.float32), np.array([1.0], np.float32)]
    sums = PairwiseSum()
    for term in terms:
        buffer = sums.new_term(term)
        buffer[...] = term
        sums.add(buffer)
    tree = (terms[0] + terms[1]) + (terms[2] + terms[3])
    left_to_right = ((terms[0] + terms[1]) + terms[2]) + terms[3]
    assert sums.result().tobytes() == tree.tobytes()
    assert tree.tobytes() != left_to_right.tobytes()  # the order is visible in the bits


def test_part_streams_depend_on_the_part_and_step_not_on_earlier_parts():
    generator = minidl.Generator(5)
    streams = PartStreams([generator])
    state = generator.get_state()
    streams.begin_step(7)
    with streams.part(2):
        first = generator.uniform((4,))
    with streams.part(1):
        other = generator.uniform((4,))
    with streams.part(2):
        again = generator.uniform((4,))
    streams.begin_step(8)
    with streams.part(2):
        next_step = generator.uniform((4,))
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other) and not np.array_equal(first, next_step)
    assert generator.get_state() == state  # the generator's own stream is untouched


def test_state_weights_are_the_moving_statistics_of_trainable_layers():
    model = Sequential([Dense(4, input_shape=(3,)), BatchNormalization(), Dropout(0.5, seed=1),
                        BatchNormalization()])
    model.layers[3].trainable = False
    first = model.layers[1]
    assert model_parts.state_weights(model) == [first.moving_mean, first.moving_variance]
    owned = model_parts.generators(model)[1:]  # after the default generator
    assert len(owned) == 2 and owned[0] is model.shuffle_generator
    assert owned[1] is model.layers[2].generator


def test_distributed_optimizer_checks_its_arguments():
    dist.init()
    optimizer = SGD(0.1)
    assert dist.DistributedOptimizer(optimizer) is optimizer
    assert optimizer.strategy.is_chief
    with pytest.raises(ValueError, match='already distributed'):
        dist.DistributedOptimizer(optimizer)
    with pytest.raises(ValueError, match='power of two'):
        dist.DistributedOptimizer('sgd', micro_shards=3)
    with pytest.raises(ValueError, match='exact sums'):
        dist.DistributedOptimizer('sgd', micro_shards=4, compression='fp16')
    with pytest.raises(ValueError, match='compression'):
        dist.DistributedOptimizer('sgd', compression='int8')


def test_sync_batch_normalization_on_one_rank_is_batch_normalization():
    dist.init()
    x = np.random.default_rng(0).normal(size=(16, 5)).astype('float32')
    layers = [dist.SyncBatchNormalization(momentum=0.9), BatchNormalization(momentum=0.9)]
    outputs = [layer(minidl.Tensor(x), training=True).data for layer in layers]
    assert np.array_equal(outputs[0], outputs[1])
    assert np.array_equal(layers[0].moving_variance.data, layers[1].moving_variance.data)
    config = layers[0].get_config()
    assert dist.SyncBatchNormalization.from_config(config).get_config() == config


def test_a_model_without_weights_yet_is_refused_with_advice():
    dist.init()
    model = Sequential([Dense(2)])
    model.compile(dist.DistributedOptimizer('sgd'), 'mse')
    batches = iter([(np.ones((4, 3), 'float32'), np.ones((4, 2), 'float32'))] * 2)
    with pytest.raises(ValueError, match='has no weights yet'):  # nothing to build it from yet
        model.fit(batches, steps_per_epoch=2, verbose=0)
    assert not model.built


def test_a_model_built_from_its_arrays_trains_distributed():
    dist.init()
    model = Sequential([Dense(2)])  # built from x's shape before the weights are broadcast
    model.compile(dist.DistributedOptimizer('sgd'), 'mse')
    model.fit(np.ones((4, 3), 'float32'), np.ones((4, 2), 'float32'), verbose=0)
    assert model.built and model.optimizer.iterations == 1


def test_a_model_with_sync_batch_normalization_saves_and_loads(tmp_path):
    dist.init()  # a job of size 1: the layer is a BatchNormalization
    minidl.set_seed(3)
    model = Sequential([Dense(3, input_shape=(4,)), dist.SyncBatchNormalization(momentum=0.5)])
    model.compile(SGD(0.1), 'mse')
    x = np.arange(32, dtype='float32').reshape(8, 4) / 10
    model.fit(x, np.ones((8, 3), 'float32'), batch_size=4, verbose=0)
    path = tmp_path / 'model.h5'
    model.save(str(path))
    loaded = load_model(str(path))
    layer = loaded.layers[1]
    assert type(layer) is dist.SyncBatchNormalization and layer.momentum == 0.5
    for saved, restored in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(saved, restored)
    # Inference normalises with the moving statistics, as Keras's BatchNormalization does.
    kernel, bias, gamma, beta, mean, variance = model.get_weights()
    expected = ((x @ kernel + bias) - mean) / np.sqrt(variance + 1e-3) * gamma + beta
    np.testing.assert_allclose(loaded.predict(x), expected, rtol=1e-5, atol=1e-6)


def test_the_architecture_digest_ignores_names_but_not_arguments():
    def build(activation=None):
        inputs = Input((4,))
        hidden = Dense(8)(inputs)
        return Model(inputs, Dense(2, activation=activation)(hidden))

    first, second = build(), build()  # automatic names differ: dense_1 vs dense_3 ...
    assert [layer.name for layer in first.layers] != [layer.name for layer in second.layers]
    assert model_sync.architecture_digest(first) == model_sync.architecture_digest(second)
    assert model_sync.architecture_digest(build('relu')) != model_sync.architecture_digest(first)
    rewired = Input((4,))
    other = Model(rewired, Dense(2)(Dense(8)(Dense(4)(rewired))))
    assert model_sync.architecture_digest(other) != model_sync.architecture_digest(first)


@pytest.mark.parametrize('value', ['soon', '0', '-1', 'inf', True])
def test_a_bad_collective_timeout_is_refused(monkeypatch, value):
    monkeypatch.setenv('MINIDL_DIST_TIMEOUT', str(value))
    with pytest.raises(ValueError, match='MINIDL_DIST_TIMEOUT must be a positive number'):
        watchdog.resolve_timeout()
    with pytest.raises(ValueError, match='timeout must be a positive number'):
        watchdog.resolve_timeout(value)
    monkeypatch.setenv('MINIDL_DIST_TIMEOUT', '2.5')
    assert watchdog.resolve_timeout() == 2.5 and watchdog.resolve_timeout(7) == 7.0
    monkeypatch.delenv('MINIDL_DIST_TIMEOUT')
    assert watchdog.resolve_timeout() == watchdog.DEFAULT_TIMEOUT == 300
