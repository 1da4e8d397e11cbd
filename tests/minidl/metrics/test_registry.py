import numpy as np
import pytest

from minidl import losses, metrics


@pytest.mark.parametrize('loss, output_shape, expected', [
    ('binary_crossentropy', (None, 3), metrics.BinaryAccuracy),
    (losses.binary_crossentropy, None, metrics.BinaryAccuracy),
    (losses.BinaryCrossentropy(from_logits=True), None, metrics.BinaryAccuracy),
    ('BinaryCrossentropy', None, metrics.BinaryAccuracy),
    ({'class_name': 'BinaryCrossentropy', 'config': {}}, None, metrics.BinaryAccuracy),
    ('mse', (None, 1), metrics.BinaryAccuracy),
    ('sparse_categorical_crossentropy', (None, 10), metrics.SparseCategoricalAccuracy),
    (losses.SparseCategoricalCrossentropy(), None, metrics.SparseCategoricalAccuracy),
    ('categorical_crossentropy', (None, 10), metrics.CategoricalAccuracy),
    ('mse', (None, 10), metrics.CategoricalAccuracy),
    (None, None, metrics.CategoricalAccuracy),
])
@pytest.mark.parametrize('name', ['accuracy', 'acc'])
def test_accuracy_depends_on_the_loss_and_output(loss, output_shape, expected, name):
    metric = metrics.get(name, loss=loss, output_shape=output_shape)
    assert type(metric) is expected and metric.name == name


@pytest.mark.parametrize('loss, expected', [
    ('binary_crossentropy', metrics.BinaryCrossentropy),
    ('sparse_categorical_crossentropy', metrics.SparseCategoricalCrossentropy),
    ('categorical_crossentropy', metrics.CategoricalCrossentropy)])
@pytest.mark.parametrize('name', ['crossentropy', 'ce'])
def test_crossentropy_depends_on_the_loss(loss, expected, name):
    metric = metrics.get(name, loss=loss)
    assert type(metric) is expected and metric.name == name


@pytest.mark.parametrize('name, function', [
    ('mse', losses.mean_squared_error), ('mae', losses.mean_absolute_error),
    ('mean_squared_error', losses.mean_squared_error),
    ('top_k_categorical_accuracy', metrics.top_k_categorical_accuracy),
    ('binary_accuracy', metrics.binary_accuracy),
    ('cosine_similarity', metrics.cosine_similarity)])
def test_function_names_give_wrappers_named_as_written(name, function):
    metric = metrics.get(name)
    assert type(metric) is metrics.MeanMetricWrapper
    assert metric.name == name and metric.fn is function


def test_functions_instances_classes_and_losses():
    def hits(y_true, y_pred):
        return metrics.binary_accuracy(y_true, y_pred)

    metric = metrics.get(hits)
    assert isinstance(metric, metrics.MeanMetricWrapper) and metric.name == 'hits'
    instance = metrics.CategoricalAccuracy()
    assert metrics.get(instance) is instance
    assert type(metrics.get(metrics.RootMeanSquaredError)) is metrics.RootMeanSquaredError
    assert metrics.get('RootMeanSquaredError').name == 'root_mean_squared_error'
    wrapped = metrics.get(losses.Huber(delta=0.5, name='h'))
    assert wrapped.name == 'h' and wrapped.fn is losses.huber
    wrapped.update_state(np.zeros((1, 1)), np.full((1, 1), 2.0))
    assert wrapped.result() == pytest.approx(0.5 * (2 - 0.25))


def test_serialize_round_trips():
    for metric in (metrics.get('mse'), metrics.TopKCategoricalAccuracy(k=3, name='top3'),
                   metrics.get('acc', loss='binary_crossentropy')):
        config = metrics.serialize(metric)
        copy = metrics.deserialize(config)
        assert type(copy) is type(metric) and metrics.serialize(copy) == config
    assert metrics.serialize(metrics.get('mse'))['config']['fn'] == 'mean_squared_error'


def test_custom_objects():
    def hits(y_true, y_pred):
        return metrics.binary_accuracy(y_true, y_pred)

    config = metrics.serialize(metrics.get(hits))
    with pytest.raises(ValueError, match="unknown metric function 'hits'"):
        metrics.deserialize(config)
    assert metrics.deserialize(config, custom_objects={'hits': hits}).fn is hits


def test_unknown_names_and_types_are_rejected():
    with pytest.raises(ValueError, match="unknown metric 'acuracy'; known:.*accuracy"):
        metrics.get('acuracy')
    with pytest.raises(ValueError, match="unknown metric class 'Nope'"):
        metrics.get({'class_name': 'Nope', 'config': {}})
    with pytest.raises(TypeError, match='cannot interpret 3'):
        metrics.get(3)
