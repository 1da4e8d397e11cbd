"""The callback contract: the hooks of :class:`Callback` and when the loops call them.

``fit`` calls ``on_train_begin``, then for each epoch ``on_epoch_begin``,
``on_train_batch_begin`` / ``on_train_batch_end`` around every batch and
``on_epoch_end``, then ``on_train_end``; ``evaluate`` (and the validation of
``fit``) the ``on_test_*`` hooks, ``predict`` the ``on_predict_*`` hooks.
Batch logs hold the running means of the epoch so far; epoch logs the
epoch's values, with ``val_``-prefixed ones when ``fit`` validates.

Under a distributed strategy every process runs every callback with the same
(global) logs. Whatever changes training (stopping, the learning rate,
restored weights) must therefore happen on every process alike; printing and
writing files happens only where ``model.strategy.is_chief`` (see
:func:`is_chief`).
"""


def is_chief(model):
    """Whether this process prints and writes files (True without a model or strategy)."""
    return getattr(getattr(model, 'strategy', None), 'is_chief', True)


def print_on_chief(model, message):
    """Print ``message`` to ``sys.stdout`` if this process is the chief."""
    if is_chief(model):
        print(message)


class Callback:
    """Base class of callbacks: every hook is a no-op to override.

    Attributes:
        model: The model being trained (set by :meth:`set_model`).
        params: The loop's parameters: ``{'verbose', 'epochs', 'steps'}``.
        validation_data: Keras 2's list of ``fit``'s validation arrays: inputs,
            targets, then one sample weight array per target; None without
            validation arrays (a generator's batches are not listed).
    """

    validation_data = None  # also for subclasses whose __init__ skips this one's

    def __init__(self):
        self.model = None
        self.params = {}

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        """Called once when ``fit`` starts."""

    def on_train_end(self, logs=None):
        """Called once when ``fit`` ends; ``logs`` are the last epoch's."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called before epoch ``epoch`` (0-based) of ``fit``."""

    def on_epoch_end(self, epoch, logs=None):
        """Called after epoch ``epoch``, with its training and validation values."""

    def on_train_batch_begin(self, batch, logs=None):
        """Called before training batch ``batch`` (0-based within the epoch)."""
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        """Called after a training batch, with the running means of the epoch."""
        self.on_batch_end(batch, logs)

    def on_batch_begin(self, batch, logs=None):
        """Keras's older name of :meth:`on_train_batch_begin` (which calls it)."""

    def on_batch_end(self, batch, logs=None):
        """Keras's older name of :meth:`on_train_batch_end` (which calls it)."""

    def on_test_begin(self, logs=None):
        """Called when ``evaluate`` (or the validation of an epoch) starts."""

    def on_test_end(self, logs=None):
        """Called when evaluation ends, with its loss and metrics."""

    def on_test_batch_begin(self, batch, logs=None):
        """Called before an evaluation batch."""

    def on_test_batch_end(self, batch, logs=None):
        """Called after an evaluation batch, with the running means so far."""

    def on_predict_begin(self, logs=None):
        """Called when ``predict`` starts."""

    def on_predict_end(self, logs=None):
        """Called when ``predict`` ends."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before a prediction batch."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called after a prediction batch; ``logs['outputs']`` holds its outputs."""


#: The hooks a loop calls on a CallbackList (and a LambdaCallback may replace).
HOOKS = tuple(name for name in vars(Callback) if name.startswith('on_'))
