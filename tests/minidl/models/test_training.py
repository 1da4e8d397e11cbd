"""The training loop against PyTorch doing the same steps by hand.

Same initial weights, same batches, same optimizer: fit must land on the
same weights (float32 tolerance) and log the exact mean loss and accuracy.
"""

import numpy as np
import pytest

import minidl
from minidl.layers import Dense, Input
from minidl.models import Model, Sequential
from minidl.optimizers import SGD

torch = pytest.importorskip('torch')


def _data(count=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count, 5)).astype('float32')
    y = (x[:, 0] + x[:, 1] > 0).astype('int64') + (x[:, 2] > 1)
    return x, y


def _mlp():
    minidl.set_seed(0)
    return Sequential([Dense(7, activation='tanh', input_shape=(5,)),
                       Dense(3, activation='softmax')])


def _torch_twin(model):
    kernel1, bias1, kernel2, bias2 = [torch.tensor(w) for w in model.get_weights()]
    layers = [torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)]
    with torch.no_grad():
        layers[0].weight.copy_(kernel1.T), layers[0].bias.copy_(bias1)
        layers[2].weight.copy_(kernel2.T), layers[2].bias.copy_(bias2)
    return torch.nn.Sequential(*layers)


def _torch_weights(net):
    return [net[0].weight.detach().numpy().T, net[0].bias.detach().numpy(),
            net[2].weight.detach().numpy().T, net[2].bias.detach().numpy()]


@pytest.mark.parametrize('weighted', [False, True])
def test_fit_matches_pytorch_step_by_step(weighted):
    x, y = _data()
    weights = np.linspace(0.5, 2.0, len(x)).astype('float32') if weighted else None
    model = _mlp()
    net = _torch_twin(model)
    model.compile(SGD(learning_rate=0.1, momentum=0.9), 'sparse_categorical_crossentropy',
                  metrics=['accuracy'])
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
                        sample_weight=weights)

    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(2):
        loss_sum = correct = 0.0
        for start in range(0, len(x), 16):
            xb, yb = torch.tensor(x[start:start + 16]), torch.tensor(y[start:start + 16])
            wb = torch.ones(len(xb)) if weights is None else torch.tensor(weights[start:start + 16])
            optimizer.zero_grad()
            logits = net(xb)
            per_sample = torch.nn.functional.cross_entropy(logits, yb, reduction='none')
            loss = (per_sample * wb).sum() / len(xb)  # Keras: sum over batch size
            loss.backward()
            optimizer.step()
            loss_sum += float((per_sample * wb).sum().detach())
            correct += float(((logits.argmax(1) == yb).float() * wb).sum().detach())
        expected_accuracy = correct / (len(x) if weights is None else weights.sum())
        assert history.history['loss'][epoch] == pytest.approx(loss_sum / len(x), rel=1e-5)
        assert history.history['accuracy'][epoch] == pytest.approx(expected_accuracy, rel=1e-6)

    for ours, theirs in zip(model.get_weights(), _torch_weights(net)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_evaluate_is_the_exact_mean_over_uneven_batches():
    x, y = _data(count=37)
    model = _mlp()
    model.compile('sgd', 'sparse_categorical_crossentropy', metrics=['accuracy'])
    loss, accuracy = model.evaluate(x, y, batch_size=10, verbose=0)
    probabilities = model.predict(x, batch_size=7)
    per_sample = -np.log(probabilities[np.arange(len(y)), y])
    assert loss == pytest.approx(per_sample.mean(), rel=1e-6)
    assert accuracy == pytest.approx((probabilities.argmax(1) == y).mean(), abs=1e-12)
    np.testing.assert_array_equal(model.predict_on_batch(x), probabilities)


def test_train_on_batch_and_test_on_batch():
    x, y = _data(count=16)
    model = _mlp()
    net = _torch_twin(model)
    model.compile(SGD(learning_rate=0.5), 'sparse_categorical_crossentropy')
    before = model.test_on_batch(x, y)
    loss = model.train_on_batch(x, y)
    reference = torch.nn.functional.cross_entropy(net(torch.tensor(x)), torch.tensor(y))
    assert loss == pytest.approx(reference.item(), rel=1e-6)
    assert before == pytest.approx(loss, rel=1e-6)
    reference.backward()
    with torch.no_grad():
        for param in net.parameters():
            param -= 0.5 * param.grad
    for ours, theirs in zip(model.get_weights(), _torch_weights(net)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_class_weight_equals_the_same_sample_weight():
    x, y = _data()
    results = []
    for kwargs in ({'class_weight': {0: 1.0, 1: 3.0, 2: 0.5}},
                   {'sample_weight': np.array([1.0, 3.0, 0.5])[y]}):
        model = _mlp()
        model.compile('sgd', 'sparse_categorical_crossentropy')
        model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0, **kwargs)
        results.append(model.get_weights())
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_multi_output_losses_weights_and_log_names():
    minidl.set_seed(0)
    inputs = Input((5,), name='features')
    hidden = Dense(6, activation='relu')(inputs)
    label = Dense(3, activation='softmax', name='label')(hidden)
    score = Dense(1, name='score')(hidden)
    model = Model(inputs, [label, score])
    model.compile('adam', loss={'label': 'sparse_categorical_crossentropy', 'score': 'mse'},
                  loss_weights={'label': 1.0, 'score': 0.5}, metrics={'label': 'accuracy'})
    x, y = _data()
    target = x[:, :1] * 2
    logs = model.fit({'features': x}, {'label': y, 'score': target}, epochs=1, verbose=0,
                     batch_size=40, shuffle=False).history
    assert sorted(logs) == ['label_accuracy', 'label_loss', 'loss', 'score_loss']
    assert logs['loss'][0] == pytest.approx(logs['label_loss'][0] + 0.5 * logs['score_loss'][0],
                                            rel=1e-6)
    assert model.metrics_names == ['loss', 'label_loss', 'score_loss', 'label_accuracy']


def test_validation_split_takes_the_last_samples():
    x, y = _data(count=50)
    model = _mlp()
    model.compile('sgd', 'sparse_categorical_crossentropy')
    history = model.fit(x, y, epochs=1, validation_split=0.2, verbose=0, batch_size=50)
    assert history.history['val_loss'][0] == pytest.approx(
        model.evaluate(x[40:], y[40:], verbose=0), rel=1e-6)


def test_generator_and_sequence_feed_the_same_batches_as_arrays():
    x, y = _data(count=32)

    class Batches(minidl.data.Sequence):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return x[index * 8:(index + 1) * 8], y[index * 8:(index + 1) * 8]

    def generator():
        while True:
            yield from Batches()

    results = []
    for source, kwargs in ((x, {'y': y, 'batch_size': 8}), (Batches(), {}),
                           (generator(), {'steps_per_epoch': 4})):
        model = _mlp()
        model.compile('sgd', 'sparse_categorical_crossentropy')
        model.fit(source, epochs=2, shuffle=False, verbose=0, **kwargs)
        results.append(model.get_weights())
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_same_seed_same_bits_and_shuffling_changes_the_result():
    x, y = _data()

    def run(seed, shuffle=True):
        minidl.set_seed(seed)
        model = Sequential([Dense(7, activation='tanh', input_shape=(5,)), Dense(3)])
        model.compile('adam', minidl.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=shuffle)
        return np.concatenate([w.ravel() for w in model.get_weights()])

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(3, shuffle=False))


@pytest.mark.parametrize('bad, message', [
    ({'x': np.full((4, 5), np.nan, 'float32')}, 'NaN'),
    ({'y': np.zeros(3, 'int64')}, 'different numbers of samples'),
    ({'x': np.zeros((4, 6), 'float32')}, 'incompatible'),
    ({'batch_size': 0}, 'batch_size'),
])
def test_bad_input_is_refused_before_any_update(bad, message):
    model = _mlp()
    model.compile('sgd', 'sparse_categorical_crossentropy')
    before = model.get_weights()
    arguments = {'x': np.zeros((4, 5), 'float32'), 'y': np.zeros(4, 'int64'), 'verbose': 0}
    arguments.update(bad)
    with pytest.raises(ValueError, match=message):
        model.fit(**arguments)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_fit_before_compile_is_an_error():
    with pytest.raises(RuntimeError, match='compile'):
        _mlp().fit(np.zeros((2, 5)), np.zeros(2))


def test_a_custom_loss_sees_vector_targets_as_columns_as_in_keras():
    seen = []

    def squared_error(y_true, y_pred):
        seen.append(tuple(y_true.shape))
        return ((y_true - y_pred) ** 2).mean(axis=-1)

    model = Sequential([Dense(1, input_shape=(2,), kernel_initializer='ones', use_bias=False)])
    model.compile('sgd', loss=squared_error)
    x, y = np.array([[1.0, 2.0], [3.0, 4.0]], 'float32'), np.array([1.0, 5.0], 'float32')
    # Outputs 3 and 7: errors 2 and 2, not the (2, 2) broadcast of a vector against a column.
    assert model.evaluate(x, y, verbose=0) == pytest.approx(4.0)
    assert seen[-1] == (2, 1)
