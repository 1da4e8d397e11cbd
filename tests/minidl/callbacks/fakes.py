"""A fake model with exactly the interface callbacks may use, and a loop driving them like fit."""

from types import SimpleNamespace

import numpy as np

from minidl.callbacks import CallbackList


class FakeOptimizer:
    def __init__(self, learning_rate=0.1):
        self.learning_rate = learning_rate

    def current_learning_rate(self):
        return self.learning_rate


class FakeModel:
    """Records saves; its one weight array holds the number of the last trained epoch."""

    def __init__(self, is_chief=True, learning_rate=0.1):
        self.stop_training = False
        self.optimizer = FakeOptimizer(learning_rate)
        self.strategy = SimpleNamespace(is_chief=is_chief)
        self.weights = [np.zeros(3)]
        self.saved = []

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w, copy=True) for w in weights]

    def save(self, filepath, overwrite=True):
        self.saved.append(('save', filepath, overwrite))

    def save_weights(self, filepath, overwrite=True):
        self.saved.append(('save_weights', filepath, overwrite))


def fit(model, callbacks, epoch_logs, steps=2, verbose=0, initial_epoch=0, batch_logs=None):
    """Run the hooks of ``fit`` as minidl.models.loop.run_epochs does.

    Epoch ``initial_epoch + i`` ends with the logs ``epoch_logs[i]``; each of
    its batches ends with ``batch_logs(epoch, step)`` (default: the epoch's
    loss) and sets the weights to the epoch number; ``steps=None`` runs 2
    batches of an unknown number. Returns the CallbackList and the number
    of epochs run.
    """
    epochs = initial_epoch + len(epoch_logs)
    callbacks = CallbackList(callbacks, add_history=True, add_progbar=verbose != 0, model=model,
                             verbose=verbose, epochs=epochs, steps=steps)
    model.stop_training = False
    callbacks.on_train_begin()
    logs, run = {}, 0
    for epoch in range(initial_epoch, epochs):
        callbacks.on_epoch_begin(epoch)
        for step in range(2 if steps is None else steps):
            callbacks.on_train_batch_begin(step)
            model.weights = [np.full(3, float(epoch))]
            logs = (batch_logs(epoch, step) if batch_logs else
                    {'loss': epoch_logs[epoch - initial_epoch].get('loss', 1.0)})
            callbacks.on_train_batch_end(step, logs)
            if model.stop_training:
                break
        logs = dict(epoch_logs[epoch - initial_epoch])
        callbacks.on_epoch_end(epoch, logs)
        run += 1
        if model.stop_training:
            break
    callbacks.on_train_end(logs)
    return callbacks, run
