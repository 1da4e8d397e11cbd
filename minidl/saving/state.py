"""minidl's own training state beyond Keras's file: the random generators ('minidl_state').

A resumed run draws the same shuffles and dropout masks as the run that was
never interrupted only if every generator continues where it stopped. Each
model owns its generators (its epoch order, each Dropout's and recurrent
layer's masks: :meth:`minidl.layers.Layer.named_generators`), so their
states go into the model's file and come back only into that model; nothing
of the process (the default generator, other models) is saved or changed::

    {"layer_generators": {"<layer name>/<attribute>": {...}, ...}}

Each state is the dict of :meth:`minidl.compute.Generator.get_state`.
"""


def random_state(model):
    """The 'minidl_state' dict of ``model``."""
    return {'layer_generators': {key: generator.get_state()
                                 for key, generator in model.named_generators()}}


def restore_random_state(model, state):
    """Put ``model``'s generators back in ``state``; a malformed state raises before any change.

    Generators the file does not name keep their state (a file written by
    Keras names none).
    """
    if not isinstance(state, dict) or not isinstance(state.get('layer_generators'), dict):
        raise ValueError("'minidl_state' must be an object with the 'layer_generators' "
                         "states by name")
    generators = dict(model.named_generators())
    changes = [(generators[key], value) for key, value in state['layer_generators'].items()
               if key in generators]
    previous = [(generator, generator.get_state()) for generator, _ in changes]
    try:
        for generator, value in changes:
            generator.set_state(value)
    except (TypeError, ValueError, KeyError) as error:
        for generator, value in previous:
            generator.set_state(value)
        raise ValueError(f"'minidl_state' holds an invalid generator state: {error}") from error
