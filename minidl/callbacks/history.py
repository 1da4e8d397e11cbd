"""History: the per-epoch record of ``fit``, which ``fit`` returns."""

from minidl.callbacks.base import Callback


class History(Callback):
    """Records the epoch logs of ``fit``; ``fit`` adds one and returns it.

    Attributes:
        history: Dict from each log name ('loss', 'accuracy', 'val_loss',
            'lr', ...) to the list of its values, one per epoch.
        epoch: The indices of the recorded epochs (from ``initial_epoch``).
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def set_model(self, model):
        super().set_model(model)
        if model is not None:
            model.history = self

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)
