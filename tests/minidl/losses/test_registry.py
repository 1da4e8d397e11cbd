import numpy as np
import pytest

from minidl import losses


@pytest.mark.parametrize('name, function', [
    ('categorical_crossentropy', losses.categorical_crossentropy), ('mse', losses.mse),
    ('MSE', losses.mean_squared_error), ('mae', losses.mean_absolute_error),
    ('mape', losses.mean_absolute_percentage_error),
    ('msle', losses.mean_squared_logarithmic_error),
    ('kld', losses.kl_divergence), ('kullback_leibler_divergence', losses.kl_divergence),
    ('logcosh', losses.log_cosh), ('huber', losses.huber), ('poisson', losses.poisson)])
def test_function_names_and_aliases_give_the_function(name, function):
    assert losses.get(name) is function


def test_class_names_and_dicts_give_instances():
    assert isinstance(losses.get('CategoricalCrossentropy'), losses.CategoricalCrossentropy)
    loss = losses.get({'class_name': 'Huber', 'config': {'delta': 2.0, 'name': 'h'}})
    assert isinstance(loss, losses.Huber) and loss.get_config()['delta'] == 2.0
    assert loss.name == 'h'


def test_instances_callables_and_none_pass_through():
    loss = losses.BinaryCrossentropy()
    assert losses.get(loss) is loss

    def custom(y_true, y_pred):
        return losses.mse(y_true, y_pred)

    assert losses.get(custom) is custom
    assert losses.get(None) is None


def test_serialize_round_trips():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, reduction='sum')
    config = losses.serialize(loss)
    assert config == {'class_name': 'SparseCategoricalCrossentropy',
                      'config': {'reduction': 'sum', 'name': 'sparse_categorical_crossentropy',
                                 'from_logits': True}}
    assert losses.deserialize(config).get_config() == loss.get_config()
    assert losses.serialize(losses.mse) == 'mean_squared_error'
    assert losses.deserialize('mean_squared_error') is losses.mse


def test_function_wrapper_round_trips_by_function_name():
    wrapper = losses.LossFunctionWrapper(losses.huber, name='h', delta=0.5)
    copy = losses.deserialize(losses.serialize(wrapper))
    assert copy.fn is losses.huber and copy.get_config() == wrapper.get_config()
    y_true, y_pred = np.zeros((2, 3)), np.full((2, 3), 2.0)
    assert copy(y_true, y_pred).item() == pytest.approx(0.5 * (2 - 0.25))


def test_custom_objects():
    def doubled(y_true, y_pred):
        return 2 * losses.mae(y_true, y_pred)

    assert losses.deserialize('doubled', custom_objects={'doubled': doubled}) is doubled
    config = losses.serialize(losses.LossFunctionWrapper(doubled))
    assert losses.deserialize(config, custom_objects={'doubled': doubled}).fn is doubled


def test_unknown_names_and_types_are_rejected():
    with pytest.raises(ValueError, match="unknown loss 'categorical_cross_entropy'; known:.*mse"):
        losses.get('categorical_cross_entropy')
    with pytest.raises(ValueError, match="unknown loss class 'Nope'"):
        losses.get({'class_name': 'Nope', 'config': {}})
    with pytest.raises(TypeError, match='cannot interpret 3'):
        losses.get(3)
    with pytest.raises(TypeError):
        losses.get(losses.Huber)
