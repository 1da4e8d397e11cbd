"""minidl's own training state beyond Keras's file: the random generators ('minidl_state').

A resumed run draws the same shuffles and dropout masks as the run that was
never interrupted only if every generator continues where it stopped: the
default generator (epoch order, layers without a seed) and the generators of
layers given their own ``seed``. Their states go into the file as JSON::

    {"default_generator": {...},
     "layer_generators": {"<layer name>/<attribute>": {...}, ...}}

Each state is the dict of :meth:`minidl.compute.Generator.get_state`.
"""

from minidl.compute import Generator, default_generator
from minidl.layers.base import Layer


def random_state(model):
    """The 'minidl_state' dict of ``model`` and the process."""
    return {
        'default_generator': default_generator().get_state(),
        'layer_generators': {key: generator.get_state()
                             for key, generator in _layer_generators(model).items()},
    }


def restore_random_state(model, state):
    """Put the generators back in ``state``; a malformed state raises before any change."""
    if not isinstance(state, dict) or not isinstance(state.get('default_generator'), dict) \
            or not isinstance(state.get('layer_generators', {}), dict):
        raise ValueError("'minidl_state' must be an object with a 'default_generator' state "
                         "and 'layer_generators' by name")
    generators = _layer_generators(model)
    changes = [(default_generator(), state['default_generator'])]
    changes += [(generators[key], value) for key, value in state.get('layer_generators', {}).items()
                if key in generators]
    previous = [(generator, generator.get_state()) for generator, _ in changes]
    try:
        for generator, value in changes:
            generator.set_state(value)
    except (TypeError, ValueError, KeyError) as error:
        for generator, value in previous:
            generator.set_state(value)
        raise ValueError(f"'minidl_state' holds an invalid generator state: {error}") from error


def _layer_generators(model):
    """``{'<layer name>/<attribute>': Generator}`` over every layer inside ``model``."""
    found, seen = {}, set()

    def visit(layer):
        if id(layer) in seen:
            return
        seen.add(id(layer))
        for attribute, value in vars(layer).items():
            if isinstance(value, Generator):
                found[f'{layer.name}/{attribute}'] = value
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, Layer):
                    visit(item)

    for layer in model.layers:
        visit(layer)
    return found
