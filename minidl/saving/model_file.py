"""``save_model`` and ``load_model``: a whole model in one HDF5 file (layout in the package doc)."""

import warnings

from minidl.layers.serialization import deserialize, serialize
from minidl.layers.weight_budget import weight_budget
from minidl.saving import datasets, hdf5, load_limit, state, tf_keras_compat, tf_keras_optimizers, \
    training_config as training, weights as weights_module

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
    optimizer_values = _optimizer_values(model.optimizer, _training_weights(model)) \
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


def _training_weights(model):
    """The weights the model's training updates (collected when it was compiled)."""
    collected = getattr(model, '_collected_trainable_weights', None)
    return model.trainable_weights if collected is None else collected


def _optimizer_values(optimizer, params):
    """The optimizer's state for ``params``; none if it has not updated them yet (an
    optimizer shared with another model may have state for that model's only)."""
    if not optimizer.has_slots_for(params):
        return []
    optimizer.build(params)  # makes them the parameters get_weights describes
    names, values = list(optimizer.weight_names()), optimizer.get_weights()
    weights_module.check_names(names, f'optimizer {type(optimizer).__name__}')
    if len(names) != len(values):
        raise ValueError(f'optimizer {type(optimizer).__name__} names {len(names)} weights but '
                         f'has {len(values)}')
    return list(zip(names, values))


def load_model(filepath, custom_objects=None, compile=True, max_bytes=None):
    """The model saved by :func:`save_model` (or by Keras 2 in HDF5), ready to continue.

    The model is rebuilt from its config using only minidl's registered layer
    classes and ``custom_objects``, its weights are set, and (with
    ``compile``) it is compiled as it was, with the optimizer's state. The
    random generators are put back as they were at saving, so that training
    continues exactly as the saved run would have.

    Nothing is allocated before it is checked: the rebuilt model's weights
    are counted against ``max_bytes`` as its layers create them (and start
    as zeros rather than drawn values), and every dataset's declared shape
    and dtype is compared with the model's weights and the optimizer's
    slots before any is read. If the saved optimizer state does not fit the
    optimizer, a warning says so and training continues with a fresh state.

    Args:
        filepath: The HDF5 file.
        custom_objects: Dict of your own layer, loss, metric and optimizer
            classes and functions by the names the file uses.
        compile: Compile the model with the saved training configuration.
        max_bytes: The most bytes the model's weights may take; by default
            the environment variable ``MINIDL_MAX_LOAD_BYTES``, else 16 GiB
            (:mod:`minidl.saving.load_limit`).

    Raises:
        FileNotFoundError: If there is no file.
        ValueError: If the file is damaged or malformed, names a class that
            is neither minidl's nor in ``custom_objects``, declares weights
            that do not fit the model (naming the layer and the dataset),
            or describes a model whose weights exceed ``max_bytes``.
    """
    custom_objects = dict(custom_objects or {})
    limit = load_limit.max_load_bytes(max_bytes)
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
        compile_arguments = training.compile_arguments(tf_keras_compat.training_config(
            train_config, custom_objects, tf_keras_compat.output_names(file.attrs, model_config)),
            custom_objects) if compile and train_config is not None else None
        # The file's values replace the initial ones: none are drawn.
        with weight_budget(limit, draw=False, hint=load_limit.hint('load_model', 'file')):
            model = deserialize(model_config, custom_objects)
        if not hasattr(model, 'layers'):
            raise ValueError(f"'model_config' describes a {type(model).__name__} layer, not a "
                             f"model; load a layer's weights with model.load_weights")
        if 'model_weights' not in file:
            raise KeyError("the group 'model_weights' is missing")
        assignments = weights_module.assignments_in_order(file['model_weights'], model.layers)
        optimizer_datasets = None
        if compile_arguments is not None:
            model.compile(**compile_arguments)
            if 'optimizer_weights' in file:
                optimizer_datasets = _optimizer_datasets(
                    model, file['optimizer_weights'],
                    _file_weight_names(assignments, file['model_weights']))
        elif compile:
            warnings.warn('no training configuration in the file, so the model is not '
                          'compiled; compile it before training', stacklevel=2)
        weights_module.assign(weights_module.read_values(assignments))
        if optimizer_datasets is not None:
            _set_optimizer_weights(model.optimizer, optimizer_datasets)
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
    # Translated first, so that a Lambda layer under another name ('Custom>Lambda') is found.
    config = tf_keras_compat.model_config(config, custom_objects)
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


def _file_weight_names(assignments, group):
    """``id(weight)`` -> the name of its dataset under ``group`` ('lstm/lstm_cell/kernel:0')."""
    prefix = group.name.rstrip('/') + '/'
    return {id(weight): item.name[len(prefix):].partition('/')[2]
            for layer, items in assignments for weight, item in zip(layer.weights, items)}


def _optimizer_datasets(model, group, weight_names):
    """The saved optimizer state's datasets if they fit the optimizer (none read), else None.

    They are taken in the file's order, or, in a tf-keras 2.11+ file, found
    by the names of the parameters in the file (``weight_names``, by id).
    """
    items = weights_module.saved_datasets(group)
    optimizer, params = model.optimizer, model.trainable_weights
    optimizer.build(params)
    try:
        order = tf_keras_optimizers.optimizer_order(
            hdf5.read_strings(group.attrs, 'weight_names'), optimizer,
            [weight_names.get(id(param)) for param in params])
    except ValueError as error:
        _warn_fresh_state(optimizer, error)
        return None
    if order is not None:
        items = [items[position] for position in order]
    names, shapes = optimizer.weight_names(), optimizer.weight_shapes()
    problems = [f'it has {len(names)} arrays ({", ".join(names)}), the file has {len(items)}'] \
        if len(items) != len(names) else []
    problems += [problem for item, shape, name in zip(items, shapes, names)
                 if (problem := datasets.shape_problem(item, shape, name))]
    if problems:
        _warn_fresh_state(optimizer, problems[0])
        return None
    return items


def _set_optimizer_weights(optimizer, items):
    try:
        optimizer.set_weights([datasets.read(item) for item in items])
    except ValueError as error:  # a value no state can take (a NaN iteration count)
        _warn_fresh_state(optimizer, error)


def _warn_fresh_state(optimizer, problem):
    warnings.warn(f'the saved optimizer state does not fit the optimizer '
                  f'{type(optimizer).__name__} ({problem}); training continues with a fresh '
                  f'optimizer state', stacklevel=4)
