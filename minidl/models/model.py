"""Model: a network of layers with Keras 2's compile / fit / evaluate / predict."""

from minidl import callbacks as callbacks_module, optimizers, saving
from minidl.compute import new_generator
from minidl.naming import unique_name
from minidl.data import split_validation
from minidl.layers.nest import flatten, unpack_single
from minidl.models import (
    collected_weights, generator_methods, graph_config, intake, loop, summary as summary_module)
from minidl.models.feed import ArrayFeed, Batch
from minidl.models.intake import batch_size_of, check_count
from minidl.models.network import Network
from minidl.models.objectives import Objectives
from minidl.models.strategy import Strategy
from minidl.registry import custom_object_scope

_SINGLE_PROCESS = Strategy()


class Model(Network):
    """A trainable network: ``Model(inputs, outputs)`` on symbolic tensors from ``Input``.

    Subclasses may instead create layers in ``__init__`` and define ``call``,
    as in Keras's model subclassing.

    Args:
        inputs: Input tensor(s) of the functional graph.
        outputs: Output tensor(s) computed from them.
        name: Model name ('model', 'model_1', ... by default).
    """

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        super().__init__(inputs, outputs, name=name or unique_name('model'), **kwargs)
        self.optimizer = None
        self.stop_training = False
        self.history = None
        self._compile_args = None
        self.objectives = None
        self._begun_strategy = None
        self._collected_trainable_weights = None  # set by compile
        # The order of each shuffled epoch; saved with the model for an exact resume.
        self.shuffle_generator = new_generator()

    # ----- compile ---------------------------------------------------------

    def compile(self, optimizer='rmsprop', loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, run_eagerly=None,
                steps_per_execution=None, **kwargs):
        """Choose the optimizer, the loss(es) and the metrics for training.

        Args:
            optimizer: Name ('sgd', 'adam', ...) or Optimizer instance.
            loss: Name, function or Loss; a list or dict for several outputs.
                An output with no loss (None, or missing from the dict) takes
                no targets; ``loss=None`` suits a model trained on the losses
                it adds itself (:meth:`add_loss`), fit without ``y``.
            metrics: List of names, functions or Metrics ('accuracy' resolves
                to the binary, categorical or sparse version as in Keras); a
                dict or list of lists for several outputs.
            loss_weights: Weight of each output's loss (list or dict).
            sample_weight_mode: None for one weight per sample, or
                'temporal' for one per time step (``sample_weight`` of shape
                ``(samples, timesteps)``); a list or dict gives one per output.
        """
        if kwargs:
            raise TypeError(f'compile: unexpected keyword arguments {", ".join(sorted(kwargs))}')
        if weighted_metrics:
            raise NotImplementedError('weighted_metrics is not supported; metrics are '
                                      'weighted by sample_weight already')
        previous = self.optimizer, self._compile_args, self.objectives
        try:
            self.optimizer = optimizers.get(optimizer)
            self._compile_args = {'loss': loss, 'metrics': metrics, 'loss_weights': loss_weights,
                                  'sample_weight_mode': sample_weight_mode}
            self.objectives = None
            if self.outputs:
                self._make_objectives([t.shape for t in self.outputs])
            self.strategy.attach(self)
        except Exception:  # a bad argument leaves the model compiled as it was
            self.optimizer, self._compile_args, self.objectives = previous
            raise
        # Training updates these weights until the next compile, whatever
        # `trainable` says meanwhile (Keras 2's rule; see collected_weights).
        self._collected_trainable_weights = collected_weights.collect(self)

    def _make_objectives(self, output_shapes):
        names = self.output_names if self.outputs else [
            f'output_{i + 1}' for i in range(len(output_shapes))]
        self.objectives = Objectives(names, output_shapes, **self._compile_args)
        return self.objectives

    def _objectives_for(self, outputs):
        """The compiled objectives; made from the first outputs when shapes were unknown."""
        if self.objectives is None:
            self._make_objectives([(None,) + tuple(output.shape[1:]) for output in outputs])
        return self.objectives

    def _check_compiled(self, method):
        if self.optimizer is None:
            raise RuntimeError(f'model {self.name!r} must be compiled before {method}(); '
                               f'call model.compile(optimizer, loss) first')

    @property
    def strategy(self):
        """The :class:`~minidl.models.strategy.Strategy` fit, evaluate and predict follow."""
        return getattr(self.optimizer, 'strategy', None) or _SINGLE_PROCESS

    @property
    def metrics_names(self):
        """Names of the values evaluate() returns, in order ('loss' first)."""
        if self.objectives is None:
            return []
        return ['loss'] + self.objectives.output_loss_names + flatten(self.objectives.metric_names)

    # ----- fit / evaluate / predict -------------------------------------------

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose='auto', callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1, max_queue_size=10, workers=1,
            use_multiprocessing=False):
        """Train for ``epochs`` epochs; returns the History callback.

        ``x`` may be arrays (a list or dict by input name for several inputs),
        a ``Sequence`` or a generator of ``(x, y[, sample_weight])`` batches
        (with ``steps_per_epoch``). Each epoch's order of samples is drawn
        from the model's own generator (seeded from ``minidl.set_seed`` when
        the model was made), so a run is repeatable and a full-model
        checkpoint resumes it exactly.

        Arrays are checked whole before the first step, so that bad data
        changes nothing: a ValueError for NaN or infinite values, no samples,
        NaN, infinite or negative ``sample_weight`` or ``class_weight``, and
        targets that do not fit the loss (class indices outside ``[0,
        classes)``, one-hot targets of another shape). Batches of a Sequence or
        a generator are checked as they come.
        """
        self._check_compiled('fit')
        collected_weights.check_consistency(self)
        verbose = 1 if verbose == 'auto' else verbose
        check_count(epochs, 'epochs', minimum=0)
        check_count(initial_epoch, 'initial_epoch', minimum=0)
        check_count(validation_freq, 'validation_freq', minimum=1)
        for name, steps in (('steps_per_epoch', steps_per_epoch),
                            ('validation_steps', validation_steps)):
            if steps is not None:
                check_count(steps, name, minimum=1)
        feed = self._feed('fit', x, y, sample_weight, class_weight, batch_size, steps_per_epoch,
                          shuffle)
        validation = None
        if validation_split and validation_data is None:
            if not isinstance(feed, ArrayFeed):
                raise ValueError('validation_split needs array data; pass validation_data '
                                 'with a generator or Sequence')
            arrays, validation = split_validation(
                [feed.x, feed.y, feed.sample_weight], validation_split)
            feed = ArrayFeed(*arrays, feed.batch_size, shuffle, self.shuffle_generator)
            validation = ArrayFeed(*validation, batch_size_of(validation_batch_size or
                                                            feed.batch_size))
        elif validation_data is not None:
            x_val, y_val, weight_val = intake.validation_parts(validation_data)
            validation = self._feed('fit', x_val, y_val, weight_val, None,
                                    validation_batch_size or feed.batch_size, validation_steps,
                                    shuffle=False)
        # 'do_validation' and 'metrics' (the names fit logs) as Keras 2 gives them, so
        # that callbacks can check before the first step what they will be given.
        logged = list(self.metrics_names)
        logged += ['val_' + name for name in logged] if validation is not None else []
        callbacks = callbacks_module.CallbackList(
            callbacks, add_history=True, add_progbar=verbose != 0, model=self,
            verbose=verbose, epochs=epochs, steps=feed.steps,
            do_validation=validation is not None, metrics=logged)
        if isinstance(validation, ArrayFeed):  # Keras 2's callback.validation_data
            callbacks.set_validation_data(validation.x, validation.y, validation.sample_weight)
        self._begin_strategy(every_call=True)

        def validate(epoch):
            if validation is None or (epoch + 1) % validation_freq:
                return {}
            logs = loop.evaluate_feed(self, validation, callbacks)
            return {'val_' + key: value for key, value in logs.items()}

        loop.run_epochs(self, feed, epochs, initial_epoch, callbacks, validate)
        return self.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None,
                 steps=None, callbacks=None, max_queue_size=10, workers=1,
                 use_multiprocessing=False, return_dict=False):
        """Loss and metrics over the data (exact means over all samples).

        Returns:
            The loss (a float) when there is nothing else, otherwise the list
            ``[loss, *metrics]`` in :attr:`metrics_names` order, or a dict if
            ``return_dict``.
        """
        self._check_compiled('evaluate')
        if steps is not None:
            check_count(steps, 'steps', minimum=1)
        feed = self._feed('evaluate', x, y, sample_weight, None, batch_size, steps,
                          shuffle=False)
        callbacks = callbacks_module.CallbackList(
            callbacks, add_progbar=verbose != 0, model=self, verbose=verbose, epochs=1,
            steps=feed.steps)
        self._begin_strategy(every_call=True)
        return self._results(loop.evaluate_feed(self, feed, callbacks), return_dict)

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None,
                max_queue_size=10, workers=1, use_multiprocessing=False):
        """The model's outputs for every sample: an array, or a list for several outputs.

        Raises:
            ValueError: For data without samples (as for fit and evaluate).
        """
        if steps is not None:
            check_count(steps, 'steps', minimum=1)
        feed = self._feed('predict', x, None, None, None, batch_size, steps, shuffle=False)
        callbacks = callbacks_module.CallbackList(
            callbacks, add_progbar=verbose != 0, model=self, verbose=verbose, epochs=1,
            steps=feed.steps)
        self._begin_strategy(every_call=True)
        return unpack_single(loop.predict_feed(self, feed, callbacks))

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       reset_metrics=True, return_dict=False):
        """One optimizer step on one batch; returns its loss (and metrics)."""
        self._check_compiled('train_on_batch')
        collected_weights.check_consistency(self)
        batch = self._batch('train_on_batch', x, y, sample_weight, class_weight)
        if reset_metrics and self.objectives is not None:
            self.objectives.reset()
        self._begin_strategy(every_call=False)
        return self._results(loop.train_batch(self, batch), return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True,
                      return_dict=False):
        """Loss (and metrics) on one batch, without training."""
        self._check_compiled('test_on_batch')
        batch = self._batch('test_on_batch', x, y, sample_weight, None)
        if reset_metrics and self.objectives is not None:
            self.objectives.reset()
        self._begin_strategy(every_call=False)
        return self._results(loop.test_batch(self, batch), return_dict)

    def predict_on_batch(self, x):
        """The model's outputs for one batch (numpy arrays)."""
        batch = self._batch('predict_on_batch', x, None, None, None)
        self._begin_strategy(every_call=False)
        return unpack_single(loop.predict_batch(self, batch))

    def _begin_strategy(self, every_call):
        """Let the strategy start (e.g. broadcast the weights): at every call of
        fit, evaluate and predict, and before the first ``*_on_batch`` call."""
        strategy = self.strategy
        if every_call or self._begun_strategy is not strategy:
            strategy.begin(self)
            self._begun_strategy = strategy

    def _results(self, logs, return_dict):
        if return_dict:
            return logs
        values = [logs[name] for name in self.metrics_names]
        return values[0] if len(values) == 1 else values

    # Keras 2's fit_generator, evaluate_generator and predict_generator: fit, evaluate
    # and predict on a Sequence or a generator, with Keras 2's signatures and checks.
    fit_generator = generator_methods.fit_generator
    evaluate_generator = generator_methods.evaluate_generator
    predict_generator = generator_methods.predict_generator

    # ----- data (the plain functions of minidl.models.intake) -----------------

    def _feed(self, method, x, y, sample_weight, class_weight, batch_size, steps, shuffle):
        """The batches of ``method``'s data; in-memory data is checked whole first,
        so that bad data is refused before anything is computed or changed."""
        kind = intake.kind_of(x)  # the one place that tells arrays from batches
        if kind != intake.ARRAYS:
            objectives = self.objectives
            names = (self.input_names if self.outputs else None,
                     None if objectives is None else objectives.target_names)
            return intake.batch_feed(method, kind, x, y, sample_weight, class_weight, steps,
                                     shuffle, self.shuffle_generator, names)
        batch_size = batch_size_of(batch_size)
        xs, ys, weight = self._standardize_user_data(method, x, y, sample_weight, class_weight)
        return ArrayFeed(xs, ys, weight, batch_size, shuffle, self.shuffle_generator)

    def _batch(self, method, x, y, sample_weight, class_weight):
        """The one global batch of a ``*_on_batch`` call, checked as fit checks arrays."""
        intake.refuse_scalar(method, x)
        xs, ys, weight = self._standardize_user_data(method, x, y, sample_weight, class_weight)
        return Batch(xs, ys, weight, slice(0, len(xs[0])))

    def _standardize_user_data(self, method, x, y, sample_weight, class_weight):
        """Arrays checked with this model's names and shapes (Keras 2's method name).

        The targets are checked against the losses in between: a model built
        by its first data (Sequential) builds itself here, from ``xs``'s shapes.
        """
        objectives = self.objectives
        xs, ys, weight = intake.standardize_arrays(
            method, x, y, sample_weight, class_weight, model_name=self.name,
            input_names=self.input_names if self.outputs else None,
            target_names=None if objectives is None else objectives.target_names,
            temporal=intake.any_temporal((self._compile_args or {}).get('sample_weight_mode')),
            target_temporal=None if objectives is None else
            [objectives.temporal[index] for index in objectives.target_indices])
        if ys is not None and self._compile_args is not None:
            if not self.built:
                self._build_for(xs)
            if self.objectives is None and self.outputs:
                self._make_objectives([t.shape for t in self.outputs])
            if self.objectives is not None:
                self.objectives.check_targets(ys)
        intake.check_input_shapes(xs, [tuple(t.shape) for t in self.inputs], self.input_names)
        return xs, ys, weight

    def _build_for(self, xs):
        """Build the graph from the data's shapes when the model is built that way
        (Sequential overrides this); a subclassed model is built by its first call."""

    # ----- description, saving, devices ------------------------------------

    def get_config(self):
        """The graph: layers with their configs and connections (Keras 2's layout)."""
        if not self.outputs:
            raise NotImplementedError(f'model {self.name!r} is a subclassed model; its '
                                      f'architecture is Python code, so only its weights can '
                                      f'be saved (save_weights)')
        return graph_config.network_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model that :meth:`get_config` describes (its layers newly initialised)."""
        with custom_object_scope(custom_objects):
            return graph_config.network_from_config(cls, config)

    def to_json(self, **kwargs):
        """The architecture as JSON in Keras 2's layout (:mod:`minidl.saving.model_json`);
        ``kwargs`` go to ``json.dumps``. Read it back with ``models.model_from_json``."""
        return saving.model_to_json(self, **kwargs)

    def to_yaml(self, **kwargs):
        """Not offered: loading YAML can run code. Use :meth:`to_json`."""
        raise NotImplementedError('to_yaml is not offered, because reading YAML with a general '
                                  'loader can run code; use to_json and models.model_from_json')

    def summary(self, line_length=None, positions=None, print_fn=None):
        """Print Keras's table of layers, output shapes and parameter counts."""
        with self.strategy.whole_weights(self):
            summary_module.print_summary(self, line_length, positions, print_fn)

    def save(self, filepath, overwrite=True, include_optimizer=True):
        """Write the whole model (architecture, weights, optimizer state) to HDF5."""
        with self.strategy.whole_weights(self):
            if self.strategy.is_chief:
                saving.save_model(self, filepath, overwrite, include_optimizer)

    def save_weights(self, filepath, overwrite=True):
        """Write the weights to HDF5, in Keras 2's layout."""
        with self.strategy.whole_weights(self):
            if self.strategy.is_chief:
                saving.save_weights(self, filepath, overwrite)

    def load_weights(self, filepath, by_name=False, skip_mismatch=False):
        """Read weights written by :meth:`save_weights` (or Keras 2) into this model."""
        with self.strategy.whole_weights(self):
            saving.load_weights(self, filepath, by_name, skip_mismatch)

    def get_weights(self):
        """Copies of all weights as numpy arrays, layer by layer (complete, also when sharded)."""
        with self.strategy.whole_weights(self):
            return super().get_weights()

    def set_weights(self, weights):
        """Set all weights from numpy arrays in :meth:`get_weights` order."""
        with self.strategy.whole_weights(self):
            super().set_weights(weights)

    def count_params(self):
        """Number of scalars in the weights (of the whole model, also when sharded)."""
        with self.strategy.whole_weights(self):
            return super().count_params()

    def to(self, device):
        """Move the weights (and the optimizer's state) to ``device``; returns self."""
        super().to(device)
        if self.optimizer is not None and hasattr(self.optimizer, 'to'):
            self.optimizer.to(device)
        return self
