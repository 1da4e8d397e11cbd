"""compile(sample_weight_mode='temporal'): one weight per time step, against numpy and PyTorch.

Keras 2.3's rule: the loss of a batch is the sum over samples and time
steps of weight * loss, divided by samples * timesteps; weighted metrics
divide by the sum of the weights.
"""

import numpy as np
import pytest

import minidl
from minidl.layers import Dense, Input
from minidl.models import Model, load_model
from minidl.optimizers import SGD
from minidl.utils import Sequence

torch = pytest.importorskip('torch')


def _data(count=6, steps=5):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((count, steps, 3)).astype('float32')
    y = rng.standard_normal((count, steps, 2)).astype('float32')
    weight = rng.uniform(0, 2, (count, steps)).astype('float32')
    weight[0, 3:] = 0  # padding steps, as in a masked sequence
    return x, y, weight


def _model(mode='temporal'):
    minidl.set_seed(4)
    inputs = Input((None, 3))
    model = Model(inputs, Dense(2)(inputs))
    model.compile(SGD(learning_rate=0.1), 'mse', metrics=['mae'], sample_weight_mode=mode)
    return model


def test_evaluate_weighs_each_time_step():
    x, y, weight = _data()
    model = _model()
    loss, mae = model.evaluate(x, y, sample_weight=weight, batch_size=4, verbose=0)
    error = model.predict(x) - y
    squared = (error ** 2).mean(axis=-1)
    assert loss == pytest.approx(float((weight * squared).sum() / weight.size), rel=1e-5)
    absolute = np.abs(error).mean(axis=-1)
    assert mae == pytest.approx(float((weight * absolute).sum() / weight.sum()), rel=1e-5)


def test_a_training_step_follows_pytorch_on_the_same_objective():
    x, y, weight = _data()
    model = _model()
    kernel, bias = [torch.tensor(w, requires_grad=True) for w in model.get_weights()]
    model.train_on_batch(x, y, sample_weight=weight)

    output = torch.tensor(x) @ kernel + bias
    per_step = ((output - torch.tensor(y)) ** 2).mean(dim=-1)
    loss = (per_step * torch.tensor(weight)).sum() / weight.size
    loss.backward()
    expected = [(kernel - 0.1 * kernel.grad).detach().numpy(),
                (bias - 0.1 * bias.grad).detach().numpy()]
    for ours, theirs in zip(model.get_weights(), expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)


def test_the_mode_is_saved_with_the_model(tmp_path):
    x, y, weight = _data()
    model = _model()
    model.save(tmp_path / 'model.h5')
    loaded = load_model(tmp_path / 'model.h5')
    assert loaded.evaluate(x, y, sample_weight=weight, verbose=0) == \
        model.evaluate(x, y, sample_weight=weight, verbose=0)


def test_weights_of_the_wrong_rank_are_refused_with_the_remedy():
    x, y, weight = _data()
    with pytest.raises(ValueError, match='shape .samples, timesteps.'):
        _model().fit(x, y, sample_weight=weight[:, 0], verbose=0)
    with pytest.raises(ValueError, match='sample_weight_mode="temporal"'):
        _model(mode=None).fit(x, y, sample_weight=weight, verbose=0)
    with pytest.raises(ValueError, match='class_weight does not combine'):
        _model().fit(x, y[..., 0], class_weight={0: 1.0}, verbose=0)
    with pytest.raises(ValueError, match='must be None or "temporal"'):
        _model(mode='steps')


def test_temporal_weights_from_a_sequence_train_as_from_arrays():
    x, y, weight = _data()

    class Batches(Sequence):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            part = slice(3 * index, 3 * index + 3)
            return x[part], y[part], weight[part]

    reference = _model()
    reference.fit(x, y, sample_weight=weight, batch_size=3, shuffle=False, verbose=0)
    model = _model()
    model.fit_generator(Batches(), shuffle=False, verbose=0)
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(ours, theirs)
