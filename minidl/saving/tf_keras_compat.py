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
- The optimizers of tf-keras 2.11 and later: their extra config keys and
  their state's names and order, which is also where
  ``lstm/lstm_cell/kernel:0`` meets minidl's ``lstm/kernel:0``
  (:mod:`~minidl.saving.tf_keras_optimizers`).

Weights need no rule: a layer's are paired with the file's by position, as
for Keras 2's files, whatever their names.
"""


from minidl.registry import get_custom_objects
from minidl.saving import tf_keras_optimizers

# The package tf-keras registers its own serialisable classes under (its optimizers are
# 'Custom>Adam', ...), which is also register_keras_serializable's default package.
_TF_KERAS_PACKAGE = 'Custom'

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
    if tf_keras_optimizers.is_tf_keras_optimizer(optimizer, custom_objects):
        # Messages name the class as the file does ('Custom>Adam').
        config['optimizer_config'] = {**optimizer, 'config': tf_keras_optimizers.optimizer_config(
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
