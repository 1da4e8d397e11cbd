"""optimizers.get / serialize / deserialize."""

import pytest

from minidl import optimizers

NAMES = {'sgd': optimizers.SGD, 'adam': optimizers.Adam, 'rmsprop': optimizers.RMSprop,
         'adagrad': optimizers.Adagrad, 'adadelta': optimizers.Adadelta,
         'adamw': optimizers.AdamW, 'nadam': optimizers.Nadam, 'adamax': optimizers.Adamax}


@pytest.mark.parametrize('name, cls', NAMES.items())
def test_get_resolves_names_case_insensitively(name, cls):
    assert type(optimizers.get(name)) is cls
    assert type(optimizers.get(cls.__name__)) is cls
    assert type(optimizers.get(name.upper())) is cls


def test_get_returns_instances_as_they_are_and_builds_from_dicts():
    optimizer = optimizers.Adam(0.01)
    assert optimizers.get(optimizer) is optimizer
    rebuilt = optimizers.get({'class_name': 'SGD',
                              'config': {'learning_rate': 0.2, 'momentum': 0.9}})
    assert (type(rebuilt), rebuilt.learning_rate, rebuilt.momentum) == (optimizers.SGD, 0.2, 0.9)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match='unknown optimizer .*adadelta, adagrad, adam, adamax, '
                                         'adamw, nadam, rmsprop, sgd'):
        optimizers.get('lamb')
    with pytest.raises(ValueError, match='unknown optimizer'):
        optimizers.deserialize({'class_name': 'Lamb', 'config': {}})


def test_get_rejects_other_things():
    with pytest.raises(TypeError, match='optimizer'):
        optimizers.get(0.1)
    with pytest.raises(TypeError):
        optimizers.serialize('adam')


def test_serialize_and_deserialize_with_custom_objects():
    class Custom(optimizers.SGD):
        pass

    config = optimizers.serialize(Custom(0.3, name='custom'))
    assert config == {'class_name': 'Custom', 'config': optimizers.SGD(
        0.3, name='custom').get_config()}
    rebuilt = optimizers.deserialize(config, custom_objects={'Custom': Custom})
    assert type(rebuilt) is Custom and rebuilt.get_config() == config['config']
