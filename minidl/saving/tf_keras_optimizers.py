"""tf-keras 2.11+ optimizers in a full-model file: their config keys and their state.

tf-keras 2.11 and later save optimizer configs with options minidl's
optimizers lack (:func:`optimizer_config` drops, warns about or refuses
each) and name the optimizer's state by weight (``Adam/m/dense/kernel``)
in an order of their own, where minidl's files list all of one slot, then
the next (:func:`optimizer_order` pairs them by name). Part of the rules of
:mod:`~minidl.saving.tf_keras_compat`.
"""

import warnings

from minidl.registry import get_custom_objects

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



def is_tf_keras_optimizer(optimizer, custom_objects):
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
