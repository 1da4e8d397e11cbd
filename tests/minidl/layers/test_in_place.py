"""Inference's in-place outputs (minidl.layers.in_place, minidl.compute.donation): which
inputs a model donates, proof that batch norm, ReLU and Add then write over them, and that
nothing any other reader sees changes: predictions bit for bit those of a replay that
donates nothing, with oneDNN on and off, and within float32 rounding of PyTorch's."""

import numpy as np
import pytest

import minidl
from minidl import backend as K, config, layers
from minidl.compute import donation, vendor
from minidl.functions import activation, math as math_functions, normalization
from minidl.layers import in_place
from minidl.layers.nest import flatten
from minidl.models import Model, Sequential
from minidl.tensor import Tensor, no_grad

torch = pytest.importorskip('torch')


@pytest.fixture(params=['auto', 'never'], ids=['onednn-auto', 'onednn-never'])
def onednn(request, monkeypatch):
    """Each test once with oneDNN where it loads and once on the reference code."""
    monkeypatch.setattr(config, 'use_onednn', request.param)
    vendor.forget()
    yield request.param
    vendor.forget()


@pytest.fixture
def overwrites(monkeypatch):
    """``(Function class name, whether its output is its input's array)`` per call of
    ReLU, Add and BatchNormInference."""
    seen = []

    def spying(cls):
        forward = cls.forward

        def spy(self, *arrays):
            result = forward(self, *arrays)
            seen.append((cls.__name__, any(np.shares_memory(result, a) for a in arrays)))
            return result
        return spy

    for cls in (activation.ReLU, math_functions.Add, normalization.BatchNormInference):
        monkeypatch.setattr(cls, 'forward', spying(cls))
    return seen


def _block(x, filters, name, shortcut):
    """A ResNet basic block: conv, BN, ReLU, conv, BN, add, ReLU."""
    y = layers.Conv2D(filters, 3, padding='same', use_bias=False, name=f'{name}_c1')(x)
    y = layers.BatchNormalization(name=f'{name}_bn1')(y)
    y = layers.Activation('relu', name=f'{name}_r1')(y)
    y = layers.Conv2D(filters, 3, padding='same', use_bias=False, name=f'{name}_c2')(y)
    y = layers.BatchNormalization(name=f'{name}_bn2')(y)
    y = layers.Add(name=f'{name}_add')([y, shortcut])
    return layers.Activation('relu', name=f'{name}_out')(y)


def _resnet():
    """Input, a stem (conv, BN, ReLU), two blocks (the second with a projection shortcut
    read by its add only), pooling and a classifier: odd sizes (batch 3, 7x5, 3 channels)."""
    minidl.set_seed(3)
    inputs = layers.Input((7, 5, 3))
    x = layers.Conv2D(4, 3, padding='same', use_bias=False, name='stem_c')(inputs)
    x = layers.BatchNormalization(name='stem_bn')(x)
    x = layers.Activation('relu', name='stem_r')(x)
    x = _block(x, 4, 'b1', x)
    projection = layers.BatchNormalization(name='b2_pbn')(
        layers.Conv2D(6, 1, use_bias=False, name='b2_pc')(x))
    x = _block(x, 6, 'b2', projection)
    outputs = layers.Dense(2, name='head')(layers.GlobalAveragePooling2D()(x))
    model = Model(inputs, outputs)
    rng = np.random.default_rng(0)
    for layer in model.layers:  # statistics of their own, so that batch norm does something
        if isinstance(layer, layers.BatchNormalization):
            channels = layer.gamma.shape[0]
            layer.set_weights([rng.uniform(0.5, 2, channels), rng.normal(size=channels),
                               rng.normal(size=channels), rng.uniform(0.5, 2, channels)])
    return model


def _donated_names(model):
    """``{reading layer's name: {names of the layers whose outputs it may overwrite}}``."""
    nodes = {node.id: node for node in model._nodes}
    return {nodes[node_id].layer.name: {t.node.layer.name for t in flatten(nodes[node_id].inputs)
                                        if id(t) in donated}
            for node_id, donated in in_place.plan_of(model).items()}


def _predict_without_donations(model, x, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(in_place, 'plan', lambda *args: {})
        patch.setitem(model.__dict__, '_in_place_plan', None)
        return model.predict(x, batch_size=len(x))


def test_the_plan_donates_single_reader_values_of_fresh_producers():
    donated = _donated_names(_resnet())
    assert donated == {
        'stem_bn': {'stem_c'}, 'stem_r': {'stem_bn'},
        # stem_r's output is read by b1_c1 and by b1_add (the identity shortcut): kept.
        'b1_bn1': {'b1_c1'}, 'b1_r1': {'b1_bn1'}, 'b1_bn2': {'b1_c2'}, 'b1_add': {'b1_bn2'},
        'b1_out': {'b1_add'},
        # b1_out's is read by b2_c1 and b2_pc: kept. The projection's BN output has one reader.
        'b2_pbn': {'b2_pc'}, 'b2_bn1': {'b2_c1'}, 'b2_r1': {'b2_bn1'}, 'b2_bn2': {'b2_c2'},
        'b2_add': {'b2_bn2', 'b2_pbn'}, 'b2_out': {'b2_add'},
    }


def test_what_is_never_donated():
    inputs = layers.Input((4,))
    fed_reader = layers.Activation('relu', name='reads_the_input')(inputs)  # fed data: kept
    dense = layers.Dense(4, name='dense')(fed_reader)
    bn = layers.BatchNormalization(name='bn')(dense)  # a Dense's output: not a known producer
    linear = layers.Activation('linear', name='linear')(bn)  # passes its input on
    relu_of_linear = layers.Activation('relu', name='relu_of_linear')(linear)  # so: kept
    bn2 = layers.BatchNormalization(name='bn2')(relu_of_linear)  # donated
    relu_of_output = layers.Activation('relu', name='relu_of_output')(bn2)  # bn2: an output
    bn3 = layers.BatchNormalization(name='bn3')(relu_of_output)  # donated
    sigmoid = layers.Activation('sigmoid', name='sigmoid')(bn3)  # not a known reader
    bn4 = layers.BatchNormalization(name='bn4')(sigmoid)
    twice = layers.Add(name='twice')([bn4, bn4])  # bn4 read twice: kept

    class MyReLU(layers.Activation):  # a subclass may read its input more than once
        pass

    bn5 = layers.BatchNormalization(name='bn5')(twice)  # donated
    subclassed = MyReLU('relu', name='subclassed')(bn5)
    model = Model(inputs, [bn2, subclassed])
    assert _donated_names(model) == {'bn2': {'relu_of_linear'}, 'bn3': {'relu_of_output'},
                                     'bn5': {'twice'}}


def test_a_model_with_symbolic_losses_donates_nothing():
    inputs = layers.Input((4,))
    x = layers.Activation('relu')(layers.BatchNormalization()(
        layers.Conv2D(2, 1)(layers.Reshape((2, 2, 1))(inputs))))
    model = Model(inputs, layers.Flatten()(x))
    assert in_place.plan_of(model)
    model.add_loss(K.mean(x))
    assert in_place.plan_of(model) == {}


@pytest.mark.parametrize('batch', [1, 3])
def test_predictions_are_those_of_a_replay_that_donates_nothing(batch, onednn, overwrites,
                                                                monkeypatch):
    model = _resnet()
    x = np.random.default_rng(batch).standard_normal((batch, 7, 5, 3)).astype(np.float32)
    x_before = x.copy()
    predicted = model.predict(x, batch_size=batch)
    ran_in_place = list(overwrites)
    del overwrites[:]
    expected = _predict_without_donations(model, x, monkeypatch)
    assert np.array_equal(predicted, expected)
    assert np.array_equal(x, x_before)  # the data fed is never written
    # 6 batch norms, 5 ReLUs and 2 adds, each over its input; none without the plan.
    counts = {}
    for name, over in ran_in_place:
        counts[name] = counts.get(name, 0) + over
    assert counts == {'BatchNormInference': 6, 'ReLU': 5, 'Add': 2}
    assert not any(over for _, over in overwrites)


def test_predictions_match_torch(onednn):
    model = _resnet()
    x = np.random.default_rng(5).standard_normal((3, 7, 5, 3)).astype(np.float32)
    predicted = model.predict(x, batch_size=3)
    weights = {layer.name: [np.asarray(w, np.float64) for w in layer.get_weights()]
               for layer in model.layers}
    t = torch.tensor(x, dtype=torch.float64).permute(0, 3, 1, 2)

    def conv(name, value):
        kernel = torch.tensor(weights[name][0]).permute(3, 2, 0, 1)
        return torch.nn.functional.conv2d(value, kernel, padding=kernel.shape[-1] // 2)

    def bn(name, value):
        gamma, beta, mean, var = (torch.tensor(w) for w in weights[name])
        return torch.nn.functional.batch_norm(value, mean, var, gamma, beta, eps=1e-3)

    def block(value, name, shortcut):
        y = torch.relu(bn(f'{name}_bn1', conv(f'{name}_c1', value)))
        return torch.relu(bn(f'{name}_bn2', conv(f'{name}_c2', y)) + shortcut)

    t = torch.relu(bn('stem_bn', conv('stem_c', t)))
    t = block(t, 'b1', t)
    t = block(t, 'b2', bn('b2_pbn', conv('b2_pc', t)))
    kernel, bias = (torch.tensor(w) for w in weights['head'])
    expected = (t.mean(dim=(2, 3)) @ kernel + bias).numpy()
    # float32 against float64 through 5 convolutions of at most 54 terms: 1e-5 of the
    # largest logit leaves ~10x the rounding seen; a lost ReLU or shortcut moves them by 1e-1.
    np.testing.assert_allclose(predicted, expected, rtol=0,
                               atol=1e-5 * np.abs(expected).max())


def test_nothing_is_donated_while_autograd_records(overwrites):
    model = _resnet()
    x = Tensor(np.random.default_rng(2).standard_normal((2, 7, 5, 3)).astype(np.float32))
    y = model(x, training=False)  # recording: the parameters need gradients
    assert overwrites and not any(over for _, over in overwrites)
    with no_grad():
        without_gradients = model(x, training=False).numpy()
    assert any(over for _, over in overwrites)
    # Batch norm that needs gradients runs the reference code, oneDNN's kernel otherwise:
    # the same values up to float32 rounding.
    np.testing.assert_allclose(without_gradients, y.numpy(), rtol=0,
                               atol=1e-5 * np.abs(y.numpy()).max())


def test_a_sequential_model_donates_and_keeps_its_bits(onednn, monkeypatch):
    minidl.set_seed(1)
    model = Sequential([layers.Conv2D(3, 3, use_bias=False, input_shape=(6, 6, 2)),
                        layers.BatchNormalization(), layers.Activation('relu'),
                        layers.Flatten(), layers.Dense(2)])
    x = np.random.default_rng(1).standard_normal((4, 6, 6, 2)).astype(np.float32)
    assert len(in_place.plan_of(model)) == 2  # BN over the conv's output, ReLU over BN's
    assert np.array_equal(model.predict(x), _predict_without_donations(model, x, monkeypatch))


def test_functions_overwrite_only_what_is_donated():
    x = np.array([[np.nan, -1.0, 2.0, -0.0, np.inf, -np.inf]], np.float32)
    other = x.copy()
    with no_grad():
        with donation.donating([x]):
            assert donation.may_overwrite(x) and not donation.may_overwrite(other)
            assert not donation.may_overwrite(x[:1])  # a view is not the array donated
            y = minidl.functions.relu(Tensor(x))
        assert y.data is x
        np.testing.assert_array_equal(x, np.maximum(other, 0))  # NaN kept, as numpy's
        assert not donation.may_overwrite(x)  # only inside the call
        a, b = np.ones((2, 3), np.float32), np.ones((3,), np.float32)
        with donation.donating([b]):  # b cannot hold a (2, 3) sum
            total = minidl.functions.add(Tensor(a), Tensor(b))
        assert total.data is not a and total.data is not b and np.all(b == 1)


def test_a_value_read_again_later_is_kept(onednn, monkeypatch):
    # x is read by the ReLU and, after it, by the add: overwriting it in the ReLU would
    # make the add's sum relu(x) + relu(x).
    minidl.set_seed(2)
    inputs = layers.Input((5, 4, 2))
    x = layers.BatchNormalization(name='bn')(layers.Conv2D(3, 3, name='conv')(inputs))
    relu = layers.Activation('relu', name='relu')(x)
    model = Model(inputs, layers.Flatten()(layers.Add(name='add')([relu, x])))
    assert _donated_names(model) == {'bn': {'conv'}, 'add': {'relu'}}
    data = np.random.default_rng(4).standard_normal((2, 5, 4, 2)).astype(np.float32)
    predicted = model.predict(data)
    assert (predicted < 0).any()  # relu(x) + x: negative where x is
    assert np.array_equal(predicted, _predict_without_donations(model, data, monkeypatch))
