"""Full-model files written by tf.keras / tf-keras 2.x: the rules that translate them.

tf.keras (TensorFlow 2.x, and the tf-keras package that continues it up to
2.21) keeps Keras 2's HDF5 layout, which minidl reads and writes, but puts
some things in it that Keras 2.2.4 did not. Every rule here is one such
difference, translated on the file's parsed descriptions (plain JSON data)
before anything is built, so the rest of loading is unchanged: only
registered classes and ``custom_objects`` are built, a Lambda layer is
refused, weights are counted against the load limit, and every dataset's
declared shape is checked before it is read. Files without these marks
(minidl's own, Keras 2.2.4's) pass through unchanged.

- Class names ``'package>Name'`` (:func:`class_name`).
- ``'module'`` and ``'registered_name'`` beside a ``class_name``
  (:func:`model_config`).
- InputLayer's ``'optional'`` (:func:`model_config`).
- Losses' ``'fn'`` and ``'ignore_class'``, and the output names before the
  names of a multi-output model's metrics (:func:`training_config`).
- The optimizers of tf-keras 2.11 and later: their extra config keys
  (:func:`optimizer_config`) and their state's names and order
  (:func:`optimizer_order`), which is also where ``lstm/lstm_cell/kernel:0``
  meets minidl's ``lstm/kernel:0``.

Weights need no rule: a layer's are paired with the file's by position, as
for Keras 2's files, whatever their names.
"""

import warnings

from minidl.registry import get_custom_objects

# The package tf-keras registers its own serialisable classes under (its optimizers are
# 'Custom>Adam', ...), which is also register_keras_serializable's default package.
_TF_KERAS_PACKAGE = 'Custom'

# Which of tf-keras's two optimizer families wrote the config: no option, always dropped.
_FAMILY = 'is_legacy_optimizer'
# Keys every tf-keras 2.11+ optimizer config has: their presence marks one.
_MARKS = ('use_ema', 'jit_compile', _FAMILY)
# The settings of the moving average of the weights, unused while use_ema is false.
_EMA_SETTINGS = ('ema_momentum', 'ema_overwrite_frequency')
# Options whose values other than these change the updates, and how: refused.
_CHANGE_THE_MATHS = {
    'use_ema': (False, 'an exponential moving average of the weights replaces them'),
    'weight_decay': (None, 'decoupled weight decay; the variables it skipped '
                           '(exclude_from_weight_decay) are not in the file, so it cannot be '
                           'reproduced (minidl.optimizers.AdamW decays every weight)'),
}
# tf-keras 2.11+'s names of optimizer slots that minidl names otherwise, by minidl's name.
# Adam's ('m', 'v'; 'vhat' with amsgrad) and AdamW's are the same in both. Adam's and
# SGD's are checked to mean what minidl's do (tf-keras's next step from the loaded state:
# tests/minidl/saving/test_tf_keras_files.py).
_SLOT_NAMES = {'SGD': {'momentum': 'm'}}
# tf-keras 2.11+ names the step counter 'iteration:0', outside the optimizer's scope.
_ITERATION = 'iteration:0'


def class_name(name, custom_objects):
    """The name to look ``name`` up by, for a name tf-keras wrote as ``'package>Name'``.

    tf-keras's ``register_keras_serializable(package)`` saves a class as
    ``'package>Name'``, and tf-keras registers its own optimizers that way
    ('Custom>Adam'). The whole name is kept if ``custom_objects`` (or the
    process-wide custom objects) has it; else the bare ``'Name'`` is used if
    they have that, or if the package is 'Custom' (tf-keras's own classes,
    and user classes registered with the default package, which then need
    ``custom_objects={'Name': ...}`` as any custom class does). A name from
    another package is kept, so the unknown-class error names it.
    """
    if not isinstance(name, str) or '>' not in name:
        return name
    known = [custom_objects or {}, get_custom_objects()]
    if any(name in objects for objects in known):
        return name
    package, _, bare = name.rpartition('>')
    if package == _TF_KERAS_PACKAGE or any(bare in objects for objects in known):
        return bare
    return name


def model_config(config, custom_objects):
    """A copy of the model description ``config`` with tf-keras's additions translated.

    - Every ``{'class_name', 'config'}`` object's class name goes through
      :func:`class_name`; the keys tf-keras writes beside it, ``'module'``
      and ``'registered_name'`` (where tf-keras would import the class
      from), are dropped: minidl finds classes by name in its registries only.
    - InputLayer's ``'optional'`` (tf-keras 2.15+: the input may be None) is
      dropped when false; minidl has no optional inputs, so true is refused.

    Raises:
        ValueError: For an optional input, or a description that nests too
            deeply to walk.
    """
    try:
        return _translated(config, custom_objects)
    except RecursionError:  # one call per level: a crafted file can nest without end
        raise ValueError("'model_config' nests too deeply to be a model description") from None


def _translated(value, custom_objects):
    if isinstance(value, list):
        return [_translated(item, custom_objects) for item in value]
    if not isinstance(value, dict):
        return value
    value = {key: _translated(item, custom_objects) for key, item in value.items()}
    if isinstance(value.get('class_name'), str) and 'config' in value:
        value.pop('module', None)
        value.pop('registered_name', None)
        value['class_name'] = class_name(value['class_name'], custom_objects)
        if value['class_name'] == 'InputLayer' and isinstance(value['config'], dict):
            value['config'] = _input_layer_config(value['config'])
    return value


def _input_layer_config(config):
    config = dict(config)
    if config.pop('optional', False):
        raise ValueError(f"input {config.get('name')!r} is optional (tf-keras's "
                         f"Input(optional=True)); minidl's inputs always take a value")
    return config


def training_config(config, custom_objects, output_names=None):
    """A copy of 'training_config' with class names and the optimizer's config translated.

    Losses and metrics get :func:`model_config`'s treatment of class names
    and :func:`_losses_and_metrics`'; the optimizer's config goes through
    :func:`optimizer_config`. With ``output_names`` (a tf-keras file of a
    model of several outputs: :func:`output_names`), the metrics get
    :func:`_unprefixed`'s names.

    Raises:
        ValueError: As :func:`optimizer_config`, or for a loss or metric
            that ignores a class.
    """
    if not isinstance(config, dict):
        return config  # compile_arguments refuses it, with its own message
    saved = config.get('optimizer_config')
    try:
        config = _translated(config, custom_objects)
        for key in ('loss', 'metrics', 'weighted_metrics'):
            config[key] = _losses_and_metrics(config.get(key), key == 'loss')
            if key != 'loss' and output_names:
                config[key] = _unprefixed(config[key], output_names)
    except RecursionError:  # as in model_config
        raise ValueError("'training_config' nests too deeply to be a training "
                         "configuration") from None
    optimizer = config.get('optimizer_config')
    if _is_tf_keras_optimizer(optimizer, custom_objects):
        # Messages name the class as the file does ('Custom>Adam').
        config['optimizer_config'] = {**optimizer, 'config': optimizer_config(
            optimizer['config'], optimizer['class_name'], saved.get('class_name'))}
    return config


def _losses_and_metrics(value, losses):
    """Losses (``losses`` true) or metrics as minidl's classes take their configs.

    - tf-keras 2.11+ sparse crossentropies save ``ignore_class`` (a label
      whose samples count for nothing); minidl's have no such option, so it
      is dropped when null and refused otherwise.
    - tf-keras's loss classes save the function they wrap as ``'fn'``; as
      tf-keras itself does when it reads them, only ``LossFunctionWrapper``
      keeps it (each other class wraps its own function).
    """
    if isinstance(value, list):
        return [_losses_and_metrics(item, losses) for item in value]
    if not isinstance(value, dict):
        return value
    name, inner = value.get('class_name'), value.get('config')
    if not (isinstance(name, str) and isinstance(inner, dict)):
        return {key: _losses_and_metrics(item, losses) for key, item in value.items()}
    if inner.get('ignore_class') is not None:
        raise ValueError(f"the {'loss' if losses else 'metric'} {name!r} of the training "
                         f"config ignores the class {inner['ignore_class']!r:.100} (tf-keras's "
                         f"ignore_class), which minidl's do not do; load with compile=False "
                         f"and compile the model yourself")
    dropped = {'ignore_class'} | ({'fn'} if losses and name != 'LossFunctionWrapper' else set())
    return {**value, 'config': {key: item for key, item in inner.items() if key not in dropped}}


def output_names(attrs, config):
    """The output names of a tf-keras file's model of several outputs, else None.

    Args:
        attrs: The file's root attributes: tf-keras writes 'backend'
            'tensorflow' (minidl writes 'minidl').
        config: Its parsed 'model_config'.
    """
    try:
        backend = attrs['backend']
        if isinstance(backend, bytes):
            backend = backend.decode('utf8')
        outputs = config['config']['output_layers']
        names = [output[0] for output in outputs]
    except (KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    if backend != 'tensorflow' or len(names) < 2 or not all(isinstance(n, str) for n in names):
        return None
    return names


def _unprefixed(metrics, output_names):
    """tf-keras's per-output metric objects without the output's name before theirs.

    tf-keras saves a model of several outputs' metrics as one list per
    output, each metric object under the name it was logged with
    (``'label_accuracy'`` for the output 'label'). minidl, like tf-keras
    when it compiles, puts the output's name before each metric's, so the
    saved prefix is removed: the logged names stay what they were.
    """
    if not (isinstance(metrics, list) and len(metrics) == len(output_names)
            and all(isinstance(entry, list) for entry in metrics)):
        return metrics
    return [[_without_prefix(entry, f'{output}_') for entry in entries]
            for output, entries in zip(output_names, metrics)]


def _without_prefix(entry, prefix):
    inner = entry.get('config') if isinstance(entry, dict) else None
    name = inner.get('name') if isinstance(inner, dict) else None
    if not (isinstance(name, str) and name.startswith(prefix) and len(name) > len(prefix)):
        return entry
    return {**entry, 'config': {**inner, 'name': name[len(prefix):]}}


def _is_tf_keras_optimizer(optimizer, custom_objects):
    """Whether ``optimizer`` is a tf-keras 2.11+ optimizer's config for one of minidl's classes.

    A class of your own (in ``custom_objects``) gets its config untouched:
    what its keys mean is for it to say.
    """
    if not (isinstance(optimizer, dict) and isinstance(optimizer.get('config'), dict)):
        return False
    name = optimizer.get('class_name')
    own = any(name in objects for objects in (custom_objects or {}, get_custom_objects()))
    return not own and any(key in optimizer['config'] for key in _MARKS)


def optimizer_config(config, name, saved_name=None):
    """An optimizer config from tf-keras 2.11+ without the keys minidl's optimizers lack.

    Those optimizers save ``use_ema``, ``ema_momentum``,
    ``ema_overwrite_frequency``, ``jit_compile``, ``is_legacy_optimizer`` and
    ``weight_decay``. ``is_legacy_optimizer`` says which of tf-keras's two
    families wrote the config, and the EMA settings are unused while
    ``use_ema`` is false: they are dropped, as are ``use_ema`` false,
    ``weight_decay`` null or 0 and ``jit_compile`` false. ``jit_compile``
    true (compiled with XLA: the same update) is dropped with a warning
    that names it. ``use_ema`` true or a weight decay would change the
    updates and are refused: minidl could not continue the training the
    file describes. AdamW's ``weight_decay`` is its own argument and kept.

    Args:
        config: The optimizer's 'config' object.
        name: Its class name (AdamW keeps its weight_decay).
        saved_name: Its class name as the file gives it, for messages
            (``name`` if None).

    Raises:
        ValueError: For ``use_ema`` true or a ``weight_decay`` other than
            null or 0 on an optimizer other than AdamW.
    """
    config = dict(config)
    config.pop(_FAMILY, None)
    saved_name = name if saved_name is None else saved_name
    changed = []
    for key, (inert, effect) in _CHANGE_THE_MATHS.items():
        if key not in config or (key == 'weight_decay' and str(name).lower() == 'adamw'):
            continue
        value = config.pop(key)
        if value != inert and not (key == 'weight_decay' and value == 0):
            changed.append(f'{key}={value!r:.100} ({effect})')
    if changed:
        raise ValueError(f"the saved optimizer {saved_name!r} uses tf-keras options minidl "
                         f"does not have: {'; '.join(changed)}; load with compile=False and "
                         f"compile the model with an optimizer of your choice")
    for key in _EMA_SETTINGS:
        config.pop(key, None)  # use_ema is false
    if config.pop('jit_compile', False):
        # stacklevel: optimizer_config, training_config, load_model, its caller.
        warnings.warn(f"the saved optimizer {saved_name!r}: ignored the tf-keras option "
                      f"jit_compile=True (compiling its update with XLA), which does not "
                      f"change the update", stacklevel=4)
    return config


def optimizer_order(file_names, optimizer, param_names):
    """For each of ``optimizer``'s arrays, the position of its value in a tf-keras 2.11+ file.

    tf-keras 2.11+ optimizers name their state after the parameter it
    belongs to, slot first, and store it parameter by parameter
    (``'iteration:0'``, ``'Adam/m/dense/kernel:0'``, ``'Adam/v/dense/kernel:0'``,
    ``'Adam/m/dense/bias:0'``, ...); minidl's (like Keras 2.2.4's and older
    tf.keras') put every parameter's first slot before any second slot. So
    each array is found by name: the parameter's name is the one its weight
    has in the file's 'model_weights' (``param_names``), which is also how
    tf-keras's ``lstm/lstm_cell/kernel`` meets minidl's ``lstm/kernel``
    (they are the same weight of the same layer, paired by position when
    the layer's weights were loaded).

    Args:
        file_names: The file's optimizer 'weight_names', in order.
        optimizer: The built minidl optimizer whose arrays are wanted.
        param_names: For each of the optimizer's parameters, the name of
            its weight in the file.

    Returns:
        One index into ``file_names`` per ``optimizer.weight_names()``, or
        None when the file's names are not tf-keras 2.11+'s (then the arrays
        are in minidl's order, checked by position as before).

    Raises:
        ValueError: If they are tf-keras 2.11+'s but do not name every array
            of ``optimizer`` exactly once (another optimizer's slots, or
            state minidl's optimizer does not keep), saying which.
    """
    if _ITERATION not in file_names:
        return None
    # 'Adam/m/dense/kernel:0' -> 'm/dense/kernel:0': the optimizer's own name is its prefix.
    by_name = {}
    for position, name in enumerate(file_names):
        key = name if name == _ITERATION else name.partition('/')[2]
        by_name.setdefault(key, []).append(position)
    kind = type(optimizer).__name__
    if optimizer.state_names:
        raise ValueError(f"the state of tf-keras's {kind} is not translated to minidl's "
                         f"({', '.join(optimizer.state_names)})")
    renamed = _SLOT_NAMES.get(kind, {})
    wanted = [_ITERATION] + [f'{renamed.get(slot, slot)}/{param}'
                             for slot in optimizer.slot_names for param in param_names]
    order, missing = [], []
    for name in wanted:
        found = by_name.get(name, [])
        if len(found) == 1:
            order.append(found[0])
        else:
            missing.append(name)
    unused = len(file_names) - len(order)
    if missing or unused:
        raise ValueError(f"its tf-keras names do not match {kind}'s state: "
                         f"{len(missing)} of its arrays not found once "
                         f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''}), "
                         f"{unused} of the file's left over (the state of tf-keras's Adam, "
                         f"AdamW and SGD is translated; other optimizers' only where the "
                         f"names agree)")
    return order
