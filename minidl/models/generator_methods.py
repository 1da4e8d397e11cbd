"""Keras 2's ``fit_generator``, ``evaluate_generator`` and ``predict_generator``.

They are ``fit``, ``evaluate`` and ``predict`` on a ``Sequence`` or a Python
generator, with Keras 2's signatures and checks: the number of batches
defaults to the length of a Sequence and must be given for a plain
generator, which may never end. ``workers``, ``use_multiprocessing`` and
``max_queue_size`` are accepted and have no effect: batches are read in the
main process, one after the other and in order, so a run gives the same
results every time whatever those arguments say.

They are plain functions of the model, which :class:`~minidl.models.Model`
takes as its methods; they use only its public ``fit``, ``evaluate`` and
``predict``, as a user's code would.
"""

from minidl.models import intake


def fit_generator(model, generator, steps_per_epoch=None, epochs=1, verbose=1, callbacks=None,
                  validation_data=None, validation_steps=None, validation_freq=1,
                  class_weight=None, max_queue_size=10, workers=1, use_multiprocessing=False,
                  shuffle=True, initial_epoch=0):
    """Train on the batches of ``generator``; returns the History callback.

    Args:
        generator: A ``Sequence``, or a generator yielding ``(x, y)`` or
            ``(x, y, sample_weight)`` batches without end.
        steps_per_epoch: Batches per epoch; the Sequence's length by
            default (required for a plain generator).
        epochs, verbose, callbacks, initial_epoch: As in :meth:`fit`.
        validation_data: ``(x_val, y_val[, val_sample_weight])``, a
            Sequence, or a generator (then ``validation_steps`` is required).
        validation_steps: Validation batches (the Sequence's length by default).
        validation_freq: Validate every this many epochs.
        class_weight: Weight of each class, applied to every batch.
        max_queue_size, workers, use_multiprocessing: Accepted; batches
            are read in the main process, in order (see the module doc).
        shuffle: Visit a Sequence's batches in a new order each epoch
            (drawn from the model's generator); plain generators are read
            as they come.

    Raises:
        ValueError: If a plain generator comes without its number of steps.
    """
    steps_per_epoch = steps_of(generator, steps_per_epoch, 'steps_per_epoch', 'fit_generator')
    check_validation_steps(validation_data, validation_steps)
    return model.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                     verbose=verbose, callbacks=callbacks, validation_data=validation_data,
                     validation_steps=validation_steps, validation_freq=validation_freq,
                     class_weight=class_weight, shuffle=shuffle, initial_epoch=initial_epoch)


def evaluate_generator(model, generator, steps=None, callbacks=None, max_queue_size=10,
                       workers=1, use_multiprocessing=False, verbose=0):
    """Loss and metrics over ``steps`` batches of ``generator`` (as :meth:`evaluate`).

    Args:
        generator: A ``Sequence`` or a generator of ``(x, y[, sample_weight])``.
        steps: Batches to read; the Sequence's length by default
            (required for a plain generator).
        callbacks, verbose: As in :meth:`evaluate`.
        max_queue_size, workers, use_multiprocessing: Accepted; batches
            are read in the main process, in order.

    Returns:
        The loss, or the list ``[loss, *metrics]`` in :attr:`metrics_names` order.
    """
    steps = steps_of(generator, steps, 'steps', 'evaluate_generator')
    return model.evaluate(generator, steps=steps, callbacks=callbacks, verbose=verbose)


def predict_generator(model, generator, steps=None, callbacks=None, max_queue_size=10,
                      workers=1, use_multiprocessing=False, verbose=0):
    """The model's outputs for ``steps`` batches of ``generator`` (as :meth:`predict`).

    Args:
        generator: A ``Sequence`` or a generator yielding inputs, or
            ``(x, y[, sample_weight])`` tuples whose ``x`` is used.
        steps: Batches to read; the Sequence's length by default
            (required for a plain generator).
        callbacks, verbose: As in :meth:`predict`.
        max_queue_size, workers, use_multiprocessing: Accepted; batches
            are read in the main process, in order.
    """
    steps = steps_of(generator, steps, 'steps', 'predict_generator')
    return model.predict(generator, steps=steps, callbacks=callbacks, verbose=verbose)


def check_validation_steps(validation_data, validation_steps):
    """A ValueError if a plain generator of validation batches comes without its count."""
    # A plain generator: an iterator, not a Sequence (whose length gives the count).
    if validation_steps is None and hasattr(validation_data, '__next__') and \
            intake.kind_of(validation_data) == intake.GENERATOR:
        raise ValueError('fit_generator: validation_steps=None works only when '
                         'validation_data is a Sequence (its length is the number of '
                         'batches); give validation_steps for a plain generator')


def steps_of(generator, steps, argument, method):
    """``steps``, or the length of a Sequence; a clear error for anything else.

    Args:
        generator: What ``method`` was given.
        steps: The number of batches the caller gave, or None.
        argument: Its name in ``method``'s signature ('steps_per_epoch', 'steps').
        method: 'fit_generator', 'evaluate_generator' or 'predict_generator'.

    Raises:
        TypeError: For arrays or anything else that is neither a Sequence nor
            a generator.
        ValueError: For a plain generator without ``steps``.
    """
    kind = intake.kind_of(generator)
    if kind not in (intake.SEQUENCE, intake.GENERATOR):
        raise TypeError(f'{method} takes a Sequence or a generator of batches, got a '
                        f'{type(generator).__name__}; for arrays use '
                        f'{method.replace("_generator", "")}()')
    if steps is not None:
        return steps
    if kind == intake.SEQUENCE:
        return len(generator)
    raise ValueError(f'{method}: {argument}=None works only for a Sequence (its length is the '
                     f'number of batches); give {argument} for a plain generator')
