"""minidl.registry: one get / serialize / deserialize for every kind, and the custom objects.

The expected behaviour is Keras 2's (keras.utils.generic_utils and each
kind's get): names, ``{'class_name', 'config'}`` dicts, objects passed
through, custom objects by argument or by scope.
"""

import numpy as np
import pytest

from minidl import (activations, constraints, initializers, layers, losses, metrics, models,
                    optimizers, regularizers)
from minidl.optimizers import schedules
from minidl.registry import CustomObjectScope, Registry, custom_object_scope, get_custom_objects


class Shape:
    """A stand-in base class for a small registry of our own."""

    def __init__(self, size=1):
        self.size = size

    def get_config(self):
        return {'size': self.size}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Square(Shape):
    pass


class Circle(Shape):
    pass


def area(size):
    return size * size


@pytest.fixture
def shapes():
    registry = Registry('shape', base=Shape)
    registry.register(Square, 'square', 'Square')
    registry.register(Circle)
    registry.register(area)
    return registry


@pytest.fixture(autouse=True)
def no_leftover_custom_objects():
    yield
    assert get_custom_objects() == {}


# ----- one registry ---------------------------------------------------------------------


def test_names_give_new_instances_of_classes_and_functions_as_they_are(shapes):
    assert type(shapes.get('square')) is Square and shapes.get('square').size == 1
    assert shapes.get('square') is not shapes.get('square')
    assert type(shapes.deserialize('Circle')) is Circle
    assert shapes.get('area') is area
    assert shapes.names() == list(shapes) == ['square', 'Square', 'Circle', 'area']
    assert 'Circle' in shapes and 'circle' not in shapes and 3 not in shapes


def test_dicts_build_through_from_config_and_objects_pass_through(shapes):
    built = shapes.get({'class_name': 'Square', 'config': {'size': 3}})
    assert type(built) is Square and built.size == 3
    assert shapes.deserialize({'class_name': 'Circle'}).size == 1  # 'config' may be left out
    assert shapes.get(built) is built
    assert shapes.get(area) is area
    assert shapes.get(None) is None
    assert shapes.get({'class_name': 'area', 'config': {}}) is area


def test_serialize_gives_a_dict_for_objects_a_name_for_functions(shapes):
    assert shapes.serialize(Square(4)) == {'class_name': 'Square', 'config': {'size': 4}}
    assert shapes.serialize(area) == 'area'
    assert shapes.serialize(None) is None
    with pytest.raises(TypeError, match='cannot serialize 3 as a shape'):
        shapes.serialize(3)


def test_unknown_names_list_the_known_ones(shapes):
    with pytest.raises(ValueError, match=r"unknown shape 'triangle'; known: square, Square, "
                                         r"Circle, area \(pass your own in custom_objects"):
        shapes.get('triangle')
    with pytest.raises(ValueError, match="unknown shape class 'Triangle'; known: square"):
        shapes.get({'class_name': 'Triangle', 'config': {}})


def test_other_identifiers_are_type_errors(shapes):
    with pytest.raises(TypeError, match=r"cannot interpret 2\.5 as a shape; give a name, "):
        shapes.get(2.5)
    with pytest.raises(TypeError, match='cannot interpret'):
        shapes.get(Square)  # a class is not an object of the kind
    with pytest.raises(TypeError, match="'class_name' and 'config'"):
        shapes.deserialize({'config': {}})
    with pytest.raises(ValueError, match="'config' of the shape 'Square' must be a dict"):
        shapes.deserialize({'class_name': 'Square', 'config': [1]})


def test_a_config_the_class_refuses_is_a_value_error_naming_it(shapes):
    with pytest.raises(ValueError, match="cannot make the shape 'Square' from its config"):
        shapes.get({'class_name': 'Square', 'config': {'sides': 4}})


def test_only_classes_of_the_kind_are_built(shapes):
    class Rocket:
        def __init__(self):
            raise AssertionError('built')

    with pytest.raises(ValueError, match="'Rocket' is not a shape class"):
        shapes.deserialize({'class_name': 'Rocket', 'config': {}}, {'Rocket': Rocket})
    with pytest.raises(ValueError, match="'area' is not a shape class"):
        shapes.deserialize({'class_name': 'area', 'config': {'size': 2}})


def test_names_are_taken_once(shapes):
    shapes.register(Square, 'square')  # the same object again is fine
    with pytest.raises(ValueError, match="name 'square' is already taken"):
        shapes.register(Circle, 'square')


def test_case_insensitive_registries_match_their_own_names_in_any_case():
    registry = Registry('shape', base=Shape, case_sensitive=False)
    registry.register(Square, 'square')
    assert type(registry.get('SQUARE')) is Square and type(registry.get('Square')) is Square
    # Custom objects match exactly.
    with pytest.raises(ValueError, match="unknown shape 'CIRCLE'"):
        registry.deserialize('CIRCLE', {'circle': Circle})


def test_refused_none_and_kinds_without_functions():
    registry = Registry('shape', base=Shape, functions=False, none=Registry.REFUSED)
    with pytest.raises(TypeError, match='cannot interpret None'):
        registry.get(None)
    with pytest.raises(TypeError, match='cannot interpret'):
        registry.get(area)


def test_factories_are_called_with_the_config():
    def unit_square(size=1):
        return Square(size)

    registry = Registry('shape', base=Shape)
    registry.register(unit_square, factory=True)
    assert type(registry.get('unit_square')) is Square
    assert registry.get({'class_name': 'unit_square', 'config': {'size': 5}}).size == 5


def test_lookup_function_refuses_classes(shapes):
    assert shapes.lookup_function('area') is area
    with pytest.raises(ValueError, match="'Circle' is not a shape function"):
        shapes.lookup_function('Circle')
    with pytest.raises(ValueError, match="unknown shape function 'volume'"):
        shapes.lookup_function('volume')


# ----- custom objects -----------------------------------------------------------------


def test_custom_objects_come_before_the_scope_before_the_own_names(shapes):
    class Big(Square):
        pass

    class Huge(Square):
        pass

    with custom_object_scope({'square': Big}):
        assert type(shapes.get('square')) is Big
        assert type(shapes.deserialize('square', {'square': Huge})) is Huge
    assert type(shapes.get('square')) is Square


def test_scopes_nest_and_restore_even_after_an_error():
    first, second = object(), object()
    with CustomObjectScope({'a': first}, None, {'b': first}, {'b': second}) as scope:
        assert isinstance(scope, CustomObjectScope)
        assert get_custom_objects() == {'a': first, 'b': second}
        with pytest.raises(RuntimeError):
            with custom_object_scope({'a': second}):
                assert get_custom_objects()['a'] is second
                raise RuntimeError
        assert get_custom_objects() == {'a': first, 'b': second}
    assert get_custom_objects() == {}
    with pytest.raises(TypeError, match='dicts of objects by name'):
        CustomObjectScope(['a'])


def test_get_custom_objects_is_the_live_process_wide_dict(shapes):
    get_custom_objects()['Triangle'] = Square
    try:
        assert type(shapes.get({'class_name': 'Triangle', 'config': {'size': 2}})) is Square
        assert type(activations.get('Triangle')) is Square  # every kind sees it
    finally:
        del get_custom_objects()['Triangle']


def test_builds_see_the_custom_objects_of_the_call_inside_their_configs():
    def doubled(x):
        return 2 * x

    config = layers.serialize(layers.Dense(2, activation=doubled))
    assert config['config']['activation'] == 'doubled'
    with pytest.raises(ValueError, match="unknown activation 'doubled'"):
        layers.deserialize(config)
    assert layers.deserialize(config, {'doubled': doubled}).activation is doubled
    with custom_object_scope({'doubled': doubled}):
        assert layers.Dense(2, activation='doubled').activation is doubled


# ----- the nine kinds -----------------------------------------------------------------


def test_every_kind_finds_a_custom_class_in_the_scope():
    kinds = [(initializers, initializers.Initializer), (regularizers, regularizers.L1L2),
             (constraints, constraints.Constraint), (losses, losses.MeanSquaredError),
             (metrics, metrics.Mean), (optimizers, optimizers.SGD),
             (schedules, schedules.ExponentialDecay), (layers, layers.Dense)]
    arguments = {schedules: {'initial_learning_rate': 0.1, 'decay_steps': 2, 'decay_rate': 0.5},
                 layers: {'units': 3}}
    for module, base in kinds:
        custom = type('Custom', (base,), {})
        config = {'class_name': 'Custom', 'config': arguments.get(module, {})}
        with pytest.raises(ValueError, match="unknown .*'Custom'"):
            module.deserialize(config)
        with custom_object_scope({'Custom': custom}):
            assert type(module.deserialize(config)) is custom, module.__name__
        assert type(module.deserialize(config, custom_objects={'Custom': custom})) is custom


@pytest.mark.parametrize('module, none', [
    (activations, activations.linear), (initializers, None), (regularizers, None),
    (constraints, None), (losses, None)])
def test_none_as_keras_2_treats_it(module, none):
    assert module.get(None) is none


@pytest.mark.parametrize('module', [optimizers, schedules])
def test_none_is_refused_where_keras_2_refuses_it(module):
    with pytest.raises(TypeError, match='cannot interpret None'):
        module.get(None)


def test_optimizer_names_ignore_case_but_custom_names_do_not():
    assert type(optimizers.get('ADAMAX')) is optimizers.Adamax
    assert type(optimizers.deserialize({'class_name': 'rmsprop', 'config': {'lr': 0.5}})) is \
        optimizers.RMSprop

    class Lamb(optimizers.SGD):
        pass

    assert type(optimizers.deserialize('Lamb', {'Lamb': Lamb})) is Lamb
    with pytest.raises(ValueError, match="unknown optimizer 'lamb'"):
        optimizers.deserialize('lamb', {'Lamb': Lamb})


def test_a_saved_model_with_a_custom_layer_loads_inside_a_scope(tmp_path):
    class Scaled(layers.Dense):
        pass

    def halved_mse(y_true, y_pred):
        return 0.5 * losses.mse(y_true, y_pred)

    model = models.Sequential([Scaled(2, input_shape=(3,))])
    model.compile('adam', halved_mse)
    path = tmp_path / 'model.h5'
    model.save(path)
    with pytest.raises(ValueError, match="unknown loss 'halved_mse'"):
        models.load_model(path)
    with custom_object_scope({'halved_mse': halved_mse}):
        with pytest.raises(ValueError, match="unknown layer class 'Scaled'"):
            models.load_model(path)
    with custom_object_scope({'Scaled': Scaled, 'halved_mse': halved_mse}):
        loaded = models.load_model(path)
    assert type(loaded.layers[0]) is Scaled
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
