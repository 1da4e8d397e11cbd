"""The training, evaluation and prediction loops behind ``Model.fit`` and friends.

One global batch of ``fit`` goes: the strategy runs :func:`gradient_step` on
this process's part (clear gradients, forward, loss, backward, the updates
layers added with ``add_update``, metric sums),
reduces the gradients over processes, the optimizer updates the weights and
applies their constraints, and the strategy sums the loss and metric totals
so the logs are exact. :mod:`minidl.models.strategy` explains the contract.

The loops take the model and use of it: calling it, its ``strategy``,
``optimizer``, ``objectives`` (``Model._objectives_for`` makes them from the
first outputs when compile could not know the outputs' shapes, as for a
subclassed model), its collected weights and ``stop_training``. The batches
come from a feed (:mod:`minidl.models.feed`) whose data the intake
(:mod:`minidl.models.intake`) checked.
"""

import numpy as np

from minidl.compute import to_numpy
from minidl.compute.device import get_default_device
from minidl.layers.layer_updates import step_updates
from minidl.layers.nest import flatten
from minidl.layers.updates import run_updates
from minidl.models import collected_weights, intake
from minidl.models.strategy import count_of
from minidl import config, interrupts
from minidl.tensor import no_grad


def model_device(model):
    """The Device of the model's weights (the default device while it has none).

    The first layer with weights tells: every step asks, and listing all of a
    large model's weights would cost more than the step's bookkeeping.
    """
    for layer in model.layers:
        weights = layer.weights
        if weights:
            return weights[0].device
    weights = model.weights  # a model whose weights are its own, not its layers'
    return weights[0].device if weights else get_default_device()


def gradient_step(model, batch, local):
    """Forward and backward on the samples ``local`` of ``batch``; gradients in ``.grad``."""
    x, y, weight = batch.take(local, model_device(model))
    for param in collected_weights.training_weights(model):
        param.grad = None
    outputs = flatten(model(x, training=True))
    objectives = model._objectives_for(outputs)
    objective = objectives.loss(y, outputs, weight, len(batch), model.losses)
    if objective.requires_grad:
        # The optimizer's loss: a LossScaleOptimizer (minidl.mixed_precision) scales it.
        model.optimizer.get_scaled_loss(objective).backward()
    # The updates layers added in this forward pass (Keras 2's model.updates, from
    # add_update): a training step applies them; evaluate and predict do not.
    updates = step_updates(model)
    if updates:
        run_updates(updates)
    objectives.update_metrics(y, outputs, weight)


def train_batch(model, batch):
    """One optimizer step on a global batch; returns the running logs of the epoch."""
    strategy = model.strategy
    # The weights collected at compile (minidl.models.collected_weights), not those
    # trainable now: a model frozen after its compile still trains its weights.
    with collected_weights.gradients_for(model, collected_weights.training_weights(model)):
        strategy.run_step(lambda local: gradient_step(model, batch, local), batch.indices)
    params = collected_weights.training_weights(model)  # a model built by this step has them now
    strategy.reduce_gradients(params)
    model.optimizer.apply_gradients(params)
    with no_grad():
        for param in params:
            if getattr(param, 'constraint', None) is not None:
                param.data[...] = param.constraint(param.data)
    return model.objectives.logs(strategy.reduce_sum(model.objectives.totals()))


@no_grad()
def test_batch(model, batch):
    """Add a global batch's losses and metrics to the sums; returns the running logs."""
    strategy = model.strategy
    local = strategy.shard(batch.indices)
    if count_of(local):
        x, y, weight = batch.take(local, model_device(model))
        outputs = flatten(model(x, training=False))
        objectives = model._objectives_for(outputs)
        objectives.loss(y, outputs, weight, len(batch), model.losses)
        objectives.update_metrics(y, outputs, weight)
    return model.objectives.logs(strategy.reduce_sum(model.objectives.totals()))


@no_grad()
def predict_batch(model, batch):
    """The model's outputs (numpy arrays, one per output) for a global batch."""
    strategy = model.strategy
    local = strategy.shard(batch.indices)
    if not count_of(local):
        return strategy.gather(None)
    x, _, _ = batch.take(local, model_device(model))
    outputs = flatten(model(x, training=False))
    return strategy.gather([to_numpy(output.data) for output in outputs])


def run_epochs(model, feed, epochs, initial_epoch, callbacks, validate):
    """The epoch loop of ``fit``; ``validate()`` returns validation logs (or {}).

    A Ctrl-C ends it with KeyboardInterrupt at the latest after the batch (or
    epoch end) it came in, even where h5py's finalizers swallowed it.
    """
    # A Ctrl-C that lands just as a ``with no_grad()`` block ends (Python looks for
    # signals on entering its __exit__) leaves this thread's recording off; the
    # next fit would then compute no gradient. The switch is put back on leaving.
    recording = config.per_thread.grad_enabled
    try:
        with interrupts.kept() as raise_if_interrupted:
            return _run_epochs(model, feed, epochs, initial_epoch, callbacks, validate,
                               raise_if_interrupted)
    finally:
        config.per_thread.grad_enabled = recording


def _run_epochs(model, feed, epochs, initial_epoch, callbacks, validate, raise_if_interrupted):
    model.stop_training = False
    model.strategy.begin_epochs(feed.batch_size, feed.steps, getattr(feed, 'count', None))
    callbacks.on_train_begin()
    logs = {}
    for epoch in range(initial_epoch, epochs):
        if model.objectives is not None:
            model.objectives.reset()
        callbacks.on_epoch_begin(epoch)
        logs = {}
        for step, batch in enumerate(feed.epoch()):
            if feed.check_batches:
                intake.check_batch(batch)
            callbacks.on_train_batch_begin(step)
            logs = train_batch(model, batch)
            callbacks.on_train_batch_end(step, logs)
            raise_if_interrupted()
            if model.stop_training:
                break
        model.strategy.end_epoch()
        epoch_logs = dict(logs)
        epoch_logs.update(validate(epoch))
        callbacks.on_epoch_end(epoch, epoch_logs)
        raise_if_interrupted()
        logs = epoch_logs
        if model.stop_training:
            break
    model.strategy.end_epochs()
    callbacks.on_train_end(logs)
    return logs


def evaluate_feed(model, feed, callbacks):
    """Loss and metrics over every batch of ``feed`` (exact global sums)."""
    if model.objectives is not None:
        model.objectives.reset()
    callbacks.on_test_begin()
    logs = {}
    for step, batch in enumerate(feed.epoch()):
        callbacks.on_test_batch_begin(step)
        logs = test_batch(model, batch)
        callbacks.on_test_batch_end(step, logs)
    callbacks.on_test_end(logs)
    return logs


def predict_feed(model, feed, callbacks):
    """Every output of the model for every sample of ``feed``, in order."""
    callbacks.on_predict_begin()
    pieces = []
    for step, batch in enumerate(feed.epoch()):
        callbacks.on_predict_batch_begin(step)
        outputs = predict_batch(model, batch)
        pieces.append(outputs)
        callbacks.on_predict_batch_end(step, {'outputs': outputs})
    callbacks.on_predict_end()
    if not pieces:
        raise ValueError('predict got no data (the input has no samples)')
    return [np.concatenate(parts) for parts in zip(*pieces)]
