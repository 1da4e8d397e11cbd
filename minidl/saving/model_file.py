"""``save_model`` and ``load_model``: a whole model in one HDF5 file (layout in the package doc)."""

import warnings

from minidl.layers.serialization import deserialize, serialize
from minidl.saving import hdf5, state, training_config as training, weights as weights_module

# Keras 2 (tf.keras >= 2.4) calls a functional model 'Functional' in its files.
_CLASS_ALIASES = {'Functional': 'Model'}


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """Write ``model``'s architecture, weights and training state to an HDF5 file.

    Everything is gathered before the file is touched, and the file is
    replaced atomically, so an error (a Lambda layer, a config that is not
    JSON) or a crash leaves any existing file as it was.

    Args:
        model: A Sequential or functional model.
        filepath: Path of the file.
        overwrite: If False and the file exists, raise FileExistsError.
        include_optimizer: Also save the compile arguments and the
            optimizer's state (when the model is compiled).

    Raises:
        TypeError: If a layer cannot be described as data (a Lambda layer).
        NotImplementedError: For a subclassed model (use ``save_weights``).
    """
    model_config = serialize(model)
    compiled = include_optimizer and getattr(model, 'optimizer', None) is not None
    train_config = training.training_config(model) if compiled else None
    layer_values = weights_module.layer_values(model.layers)
    # An optimizer that has not updated yet has no state (Keras writes no group then).
    optimizer_values = _optimizer_values(model.optimizer) \
        if compiled and model.optimizer.built else []
    random_state = state.random_state(model)
    with hdf5.atomic_writer(filepath, overwrite) as file:
        file.attrs['keras_version'] = weights_module.KERAS_VERSION.encode('utf8')
        file.attrs['backend'] = weights_module.BACKEND.encode('utf8')
        hdf5.write_json(file.attrs, 'model_config', model_config)
        if train_config is not None:
            hdf5.write_json(file.attrs, 'training_config', train_config)
        hdf5.write_json(file.attrs, 'minidl_state', random_state)
        weights_module.write_layers(file.create_group('model_weights'), layer_values)
        if optimizer_values:
            weights_module.write_arrays(file.create_group('optimizer_weights'), optimizer_values)


def _optimizer_values(optimizer):
    names, values = list(optimizer.weight_names()), optimizer.get_weights()
    weights_module.check_names(names, f'optimizer {type(optimizer).__name__}')
    if len(names) != len(values):
        raise ValueError(f'optimizer {type(optimizer).__name__} names {len(names)} weights but '
                         f'has {len(values)}')
    return list(zip(names, values))


def load_model(filepath, custom_objects=None, compile=True):
    """The model saved by :func:`save_model` (or by Keras 2 in HDF5), ready to continue.

    The model is rebuilt from its config using only minidl's registered layer
    classes and ``custom_objects``, its weights are set, and (with
    ``compile``) it is compiled as it was, with the optimizer's state. The
    random generators are put back as they were at saving, so that training
    continues exactly as the saved run would have.

    Args:
        filepath: The HDF5 file.
        custom_objects: Dict of your own layer, loss, metric and optimizer
            classes and functions by the names the file uses.
        compile: Compile the model with the saved training configuration.

    Raises:
        FileNotFoundError: If there is no file.
        ValueError: If the file is damaged or malformed, or names a class
            that is neither minidl's nor in ``custom_objects``.
    """
    custom_objects = dict(custom_objects or {})
    with hdf5.reader(filepath, 'a model') as file:
        if 'model_config' not in file.attrs:
            raise ValueError("it has no 'model_config' attribute: it holds weights only "
                             "(load them into a model with model.load_weights)")
        model_config = checked_model_config(hdf5.read_json(file.attrs, 'model_config'),
                                            custom_objects)
        train_config = hdf5.read_json(file.attrs, 'training_config') \
            if 'training_config' in file.attrs else None
        random_state = hdf5.read_json(file.attrs, 'minidl_state') \
            if 'minidl_state' in file.attrs else None
        compile_arguments = training.compile_arguments(train_config, custom_objects) \
            if compile and train_config is not None else None
        model = deserialize(model_config, custom_objects)
        if 'model_weights' not in file:
            raise KeyError("the group 'model_weights' is missing")
        weights_module.assign(
            weights_module.assignments_in_order(file['model_weights'], model.layers))
        if compile_arguments is not None:
            model.compile(**compile_arguments)
            if 'optimizer_weights' in file:
                _load_optimizer_weights(model, file['optimizer_weights'])
        elif compile:
            warnings.warn('no training configuration in the file, so the model is not '
                          'compiled; compile it before training', stacklevel=2)
        if random_state is not None:
            state.restore_random_state(model, random_state)
    return model


def checked_model_config(config, custom_objects):
    """A model's ``{'class_name', 'config'}`` checked, with Keras's class aliases mapped.

    Raises:
        ValueError: If it is malformed, or holds a Lambda layer (code) while
            ``custom_objects`` does not name a class to use instead.
    """
    if not (isinstance(config, dict) and isinstance(config.get('class_name'), str)
            and isinstance(config.get('config'), dict)):
        raise ValueError(f"'model_config' must be an object with a 'class_name' string and a "
                         f"'config' object, found {config!r:.200}")
    if 'Lambda' not in custom_objects:
        _refuse_lambda_layers(config)
    class_name = config['class_name']
    if class_name not in custom_objects:
        class_name = _CLASS_ALIASES.get(class_name, class_name)
    return {**config, 'class_name': class_name}


def _refuse_lambda_layers(config):
    """Keras stores a Lambda layer's function as marshalled bytecode; never run it."""
    if isinstance(config, list):
        for item in config:
            _refuse_lambda_layers(item)
    elif isinstance(config, dict):
        if config.get('class_name') == 'Lambda':
            inner = config.get('config')
            name = config.get('name') or (inner.get('name') if isinstance(inner, dict) else None)
            raise ValueError(f'layer {name!r} is a Lambda layer, whose function is Python code '
                             f'stored in the file; minidl never runs code from a file. Build '
                             f'the model in Python and use load_weights, or pass a layer class '
                             f'to use instead in custom_objects={{"Lambda": ...}}')
        for item in config.values():
            _refuse_lambda_layers(item)


def _load_optimizer_weights(model, group):
    values = weights_module.read_arrays(group)
    optimizer = model.optimizer
    optimizer.build(model.trainable_weights)
    try:
        optimizer.set_weights(values)
    except ValueError as error:
        warnings.warn(f'the saved optimizer state does not fit the optimizer '
                      f'{type(optimizer).__name__} ({error}); training continues with a fresh '
                      f'optimizer state', stacklevel=3)
