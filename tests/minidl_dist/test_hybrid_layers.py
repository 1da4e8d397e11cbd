"""Hybrid parallelism's pieces in one process: the layers its graph puts downstream of the
model-parallel ones, and the tiled product's weight gradients through autograd."""

import numpy as np
import pytest

pytest.importorskip('mpi4py')

from minidl import Tensor  # noqa: E402
from minidl import functions as F  # noqa: E402
from minidl.layers import Activation, Concatenate, Dense, Dropout, Input  # noqa: E402
from minidl.models import Model, Sequential  # noqa: E402
from minidl_dist.hybrid_layers import downstream_layers  # noqa: E402
from minidl_dist.tiled_product import TiledGradients, TiledProduct  # noqa: E402


def _names(layers):
    return [layer.name for layer in layers]


def test_downstream_of_a_functional_model_follows_its_graph_not_its_layer_order():
    x = Input((6,))
    side = Dense(4, name='side')(x)  # data-parallel: reads only the input
    fc = Dense(8, name='fc')
    hidden = Activation('relu', name='relu')(fc(Dense(8, name='first')(x)))
    merged = Concatenate(name='merged')([hidden, side])
    model = Model(x, [Dense(2, name='out')(merged), Dense(3, name='side_out')(side)])
    # By hand: fc, what reads its output (relu), what reads that (merged), and so on.
    assert _names(downstream_layers(model, [fc])) == ['fc', 'relu', 'merged', 'out']


def test_a_shared_layer_that_one_call_puts_downstream_takes_its_other_calls_readers():
    x = Input((6,))
    shared = Dense(4, name='shared')
    early = Dense(3, name='early')(shared(Dense(4, name='side')(x)))  # made before fc's call
    fc = Dense(4, name='fc')
    late = shared(fc(Dense(4, name='first')(x)))
    model = Model(x, [early, late])
    # A placed layer computes the global batch in each of its calls, so 'early',
    # which reads its first call, computes the global batch too.
    assert sorted(_names(downstream_layers(model, [fc]))) == ['early', 'fc', 'shared']


def test_downstream_of_a_sequential_model_is_every_layer_from_the_first_sharded_one():
    model = Sequential([Dense(8, input_shape=(5,), name='a'), Dense(8, name='fc1'),
                        Dropout(0.5, name='drop'), Dense(4, name='fc2')])
    fc2 = model.get_layer('fc2')
    assert _names(downstream_layers(model, [model.get_layer('fc1'), fc2])) == \
        ['fc1', 'drop', 'fc2']
    assert _names(downstream_layers(model, [fc2])) == ['fc2']


def test_a_subclassed_model_has_no_graph_to_place():
    class Subclassed(Model):
        def __init__(self):
            super().__init__(name='subclassed')
            self.dense = Dense(4)

        def call(self, inputs):
            return self.dense(inputs)

    model = Subclassed()
    with pytest.raises(ValueError, match="'subclassed' is subclassed"):
        downstream_layers(model, [model.dense])


@pytest.mark.parametrize('use_bias', [True, False])
def test_tiled_product_gives_autograd_the_weight_gradients_once_every_micro_shard_is_in(
        use_bias):
    # One rank computing S = 2 micro-shards in two rounds, as HybridParallel does.
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(rows, 5)) for rows in (3, 4)]
    upstream = [rng.normal(size=(rows, 6)) for rows in (3, 4)]
    k, b = rng.normal(size=(5, 6)), rng.normal(size=6)
    kernel = Tensor(k, dtype='float64', requires_grad=True)
    bias = Tensor(b, dtype='float64', requires_grad=True)
    weights = [kernel, bias] if use_bias else [kernel]
    record = TiledGradients(2)
    for index, (x, grad) in enumerate(zip(xs, upstream)):
        for weight in weights:
            weight.grad = None  # as each round's step clears them
        product = TiledProduct([len(x)], [index], 2, record)
        y = product(Tensor(x, dtype='float64', requires_grad=True), *weights)
        np.testing.assert_allclose(y.data, x @ k + (b if use_bias else 0), rtol=1e-12)
        F.sum(y * Tensor(grad, dtype='float64')).backward()
        if index == 0:  # the first round alone is not the global batch's gradient
            assert all(weight.grad is None for weight in weights)
    np.testing.assert_allclose(kernel.grad.data, xs[0].T @ upstream[0] + xs[1].T @ upstream[1],
                               rtol=1e-12)
    if use_bias:
        np.testing.assert_allclose(bias.grad.data, upstream[0].sum(0) + upstream[1].sum(0),
                                   rtol=1e-12)
    record.check_taken('fc')  # nothing left for the next step
