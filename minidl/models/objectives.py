"""What ``compile`` sets up: the losses and metrics of each output, and their sums.

Every value reported in logs is kept as exact sums (of weighted losses and
of weights), never as means of means: a batch adds its sums, and the
strategy can add the sums of all processes before the mean is taken.

As in Keras 2, an output given no loss (None, or left out of a dict) takes
no targets and no metrics: ``y`` holds arrays for the outputs with a loss
only. A model whose only losses are its own (``add_loss``) compiles with
``loss=None`` and trains without targets.
"""

import warnings

import numpy as np

from minidl import losses as losses_module, metrics as metrics_module
from minidl.compute import to_numpy
from minidl.layers.nest import flatten
from minidl.models.weighting import per_output_sample_weights
from minidl.tensor import Tensor, no_grad


class Objectives:
    """Losses and metrics of a compiled model, with their running sums.

    Args:
        output_names: Names of the model's outputs (their layers' names).
        output_shapes: Their shapes.
        loss: One loss for all outputs, a list (one per output) or a dict by
            output name; names, functions or Loss objects.
        metrics: A list applied to every output, a list of lists, or a dict by
            output name.
        loss_weights: Scalar weight of each output's loss (list or dict).
        sample_weight_mode: None (one weight per sample) or 'temporal' (one
            weight per time step: weights of shape ``(samples, timesteps)``),
            for all outputs, or a list or dict by output.
    """

    def __init__(self, output_names, output_shapes, loss, metrics=None, loss_weights=None,
                 sample_weight_mode=None):
        self.output_names = list(output_names)
        self.output_shapes = [tuple(shape) for shape in output_shapes]
        count = len(self.output_names)
        if isinstance(loss, dict):
            missing = [name for name in self.output_names if name not in loss]
            if missing:
                warnings.warn(f'loss has no entry for output(s) {missing}: they get no loss, '
                              f'and take no targets', stacklevel=4)
        self.losses = [losses_module.get(item) for item in self._per_output(loss, 'loss')]
        self.target_indices = [i for i, loss in enumerate(self.losses) if loss is not None]
        self.target_names = [self.output_names[i] for i in self.target_indices]
        weights = self._per_output(loss_weights, 'loss_weights', default=1.0)
        self.loss_weights = [float(w) for w in weights]
        self.temporal = [_is_temporal(mode) for mode in
                         self._per_output(sample_weight_mode, 'sample_weight_mode')]
        metric_lists = self._per_output_metrics(metrics)
        self.metrics = [
            [metrics_module.get(item, loss=self.losses[i], output_shape=output_shapes[i])
             for item in metric_lists[i]] if i in self.target_indices else []
            for i in range(count)]
        prefix = (lambda i: '') if count == 1 else (lambda i: self.output_names[i] + '_')
        self.metric_names = [[prefix(i) + metric.name for metric in self.metrics[i]]
                             for i in range(count)]
        self.output_loss_names = [] if count == 1 else [f'{n}_loss' for n in self.target_names]
        self.reset()

    def _per_output(self, value, argument, default=None):
        count = len(self.output_names)
        if value is None:
            return [default] * count
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(self.output_names))
            if unknown:
                raise ValueError(f'{argument} names unknown output(s) {unknown}; the model\'s '
                                 f'outputs are {self.output_names}')
            return [value.get(name, default) for name in self.output_names]
        if isinstance(value, (list, tuple)):
            if len(value) != count:
                raise ValueError(f'{argument} has {len(value)} entries but the model has '
                                 f'{count} output(s) {self.output_names}')
            return list(value)
        return [value] * count

    def _per_output_metrics(self, metrics):
        count = len(self.output_names)
        if metrics is None:
            return [[] for _ in range(count)]
        if isinstance(metrics, dict):
            lists = self._per_output(metrics, 'metrics', default=[])
            return [item if isinstance(item, (list, tuple)) else [item] for item in lists]
        metrics = list(metrics)
        if metrics and all(isinstance(item, (list, tuple)) for item in metrics):
            return self._per_output(metrics, 'metrics')
        return [metrics for _ in range(count)]

    # ----- running sums -----------------------------------------------------

    def reset(self):
        """Start new sums (each epoch, and each evaluate)."""
        self.loss_totals = np.zeros(2 + len(self.output_loss_names))  # loss, count, per output
        for metric in flatten(self.metrics):
            metric.reset_state()

    def loss(self, y_true, y_pred, sample_weight, global_count, penalties):
        """The objective of one part of a global batch, and its sums.

        Args:
            y_true: Target arrays, one per output with a loss (None if none has).
            y_pred: The model's output Tensors.
            sample_weight: Weights of this part's samples (or time steps) for
                every output, a list or dict of them by output with a loss,
                or None.
            global_count: Samples in the whole global batch.
            penalties: Weight penalties and added losses (scalar Tensors),
                each a mean over this part's samples or independent of them.

        Returns:
            Tensor: the sum of this part's weighted losses divided by the
            global count, plus the penalties scaled by this part's share of
            the batch; the parts' gradients add up to the batch's.
        """
        local_count = len(y_pred[0])
        y_true = self._checked_targets(y_true)
        if not self.target_indices and not penalties:
            raise ValueError('there is no loss to optimize: compile was given no loss and the '
                             'model has no losses of its own (add_loss, regularizers)')
        weights = self._weights_per_target(sample_weight)
        objective, sums = None, []
        for index, target, weight in zip(self.target_indices, y_true, weights):
            value = _summed_loss(self.losses[index], _as_target(target), y_pred[index], weight,
                                 local_count, self.temporal[index], self.output_names[index])
            sums.append(value.item())
            loss_weight = self.loss_weights[index]
            term = value * loss_weight if loss_weight != 1.0 else value
            objective = term if objective is None else objective + term
        if objective is not None:
            objective = objective / global_count
        share = local_count / global_count
        penalty = 0.0
        if penalties:
            penalty_sum = penalties[0]
            for extra in penalties[1:]:
                penalty_sum = penalty_sum + extra
            scaled = penalty_sum * share
            objective = scaled if objective is None else objective + scaled
            penalty = penalty_sum.item()
        weighted = sum(s * self.loss_weights[i] for s, i in zip(sums, self.target_indices))
        self.loss_totals[0] += weighted + penalty * local_count
        self.loss_totals[1] += local_count
        if self.output_loss_names:
            self.loss_totals[2:] += sums
        return objective

    def _weights_per_target(self, sample_weight):
        """One weight Tensor (or None) per output with a loss, from one array for all
        of them or a list or dict by output (see minidl.models.weighting)."""
        weights = per_output_sample_weights(sample_weight, self.target_names)
        if not isinstance(weights, list):
            weights = [weights] * len(self.target_indices)
        return [None if w is None else Tensor(w) for w in weights]

    def _checked_targets(self, y_true):
        count = len(self.target_indices)
        given = 0 if y_true is None else len(y_true)
        if given != count:
            raise ValueError(f'the outputs with a loss ({", ".join(self.target_names) or "none"}) '
                             f'need {count} target array(s) (y), got {given}')
        return y_true or []

    def check_targets(self, y_true):
        """Check whole target arrays against the losses before training starts.

        Class indices for a sparse categorical cross-entropy must lie in
        ``[0, classes)`` (the output's last axis), and the targets of the
        losses that compare with the output element by element (categorical
        and binary cross-entropy, mean squared error, as Keras 2 checks) must
        have the output's shape. Otherwise a bad label would be found only when
        its batch came, after the steps before it had changed the weights.

        Raises:
            ValueError: Naming the target, the output, the loss and the shapes.
        """
        for position, (index, target) in enumerate(zip(self.target_indices,
                                                       self._checked_targets(y_true))):
            loss = self.losses[index]
            function = loss.fn if isinstance(loss, losses_module.LossFunctionWrapper) else loss
            labels = to_numpy(target.data) if isinstance(target, Tensor) else np.asarray(target)
            where = (f'y[{position}] (shape {labels.shape}) for output '
                     f'{self.output_names[index]!r} of shape {self.output_shapes[index]}')
            if function is losses_module.sparse_categorical_crossentropy:
                _check_class_indices(labels, self.output_shapes[index], where)
            elif function in _SAME_SHAPE_LOSSES:
                _check_same_shape(labels, self.output_shapes[index], function.__name__, where)

    @no_grad()
    def update_metrics(self, y_true, y_pred, sample_weight):
        """Add one part's predictions to the metric sums."""
        weights = self._weights_per_target(sample_weight)
        for index, target, weight in zip(self.target_indices, y_true or [], weights):
            target = _as_target(target)
            output_weight = output_mask_weights(y_pred[index], weight)
            for metric in self.metrics[index]:
                metric.update_state(target, y_pred[index].detach(), output_weight)

    def totals(self):
        """All sums as one float64 vector (what a strategy adds across processes)."""
        parts = [self.loss_totals] + [metric.totals for metric in flatten(self.metrics)]
        return np.concatenate(parts)

    def logs(self, totals=None):
        """``{'loss': ..., '<output>_loss': ..., '<metric>': ...}`` from summed totals."""
        totals = self.totals() if totals is None else totals
        count = max(totals[1], 1.0)
        logs = {'loss': totals[0] / count}
        width = len(self.loss_totals)
        for index, name in enumerate(self.output_loss_names):
            logs[name] = totals[2 + index] / count
        offset = width
        for metric, name in zip(flatten(self.metrics), flatten(self.metric_names)):
            size = len(metric.totals)
            logs[name] = float(metric.result_of(totals[offset:offset + size]))
            offset += size
        return {key: float(value) for key, value in logs.items()}


# Losses whose targets have the output's shape (Keras 2 checks these three).
_SAME_SHAPE_LOSSES = (losses_module.categorical_crossentropy, losses_module.binary_crossentropy,
                      losses_module.mean_squared_error)


def _check_class_indices(labels, output_shape, where):
    """Sparse labels: shape ``output_shape[:-1]`` (a trailing 1 allowed), values in range."""
    shape = labels.shape[:-1] if labels.shape[-1:] == (1,) and \
        len(labels.shape) == len(output_shape) else labels.shape
    if not _fits(shape, output_shape[:-1]):
        raise ValueError(f'{where}: sparse_categorical_crossentropy takes one class index per '
                         f'sample, of shape {("samples",) + tuple(output_shape[1:-1])}; for '
                         f'one-hot targets use categorical_crossentropy')
    classes = output_shape[-1]
    if classes is None or not labels.size:
        return
    if labels.dtype.kind == 'f' and not np.array_equal(labels, np.floor(labels)):
        # The loss would truncate them: 1.7 would silently train as class 1.
        fraction = labels[labels != np.floor(labels)].flat[0]
        raise ValueError(f'{where}: sparse_categorical_crossentropy labels must be whole '
                         f'class indices, got {fraction!r} among them')
    indices = labels.astype(np.int64, copy=False)
    low, high = int(indices.min()), int(indices.max())
    if low < 0 or high >= classes:
        raise ValueError(f'{where}: sparse_categorical_crossentropy labels must lie in '
                         f'[0, {classes}) for {classes} classes, got values from {low} to '
                         f'{high}')


def _check_same_shape(labels, output_shape, loss_name, where):
    """Targets of ``output_shape`` (a trailing axis of size 1 added or dropped, as the losses
    do)."""
    candidates = [tuple(output_shape)]
    if candidates[0][-1:] == (1,):
        candidates.append(candidates[0][:-1])
    candidates.append(candidates[0] + (1,))
    if any(_fits(labels.shape, shape) for shape in candidates):
        return
    hint = ''
    if loss_name == 'categorical_crossentropy' and (
            _fits(labels.shape, output_shape[:-1]) or labels.shape[-1:] == (1,)):
        hint = ('; for class indices use sparse_categorical_crossentropy, or make them one-hot '
                'with minidl.utils.to_categorical')
    raise ValueError(f'{where}: {loss_name} takes targets of the output\'s shape{hint}')


def _fits(shape, expected):
    """Whether ``shape`` (samples first) matches ``expected`` (None matches any size)."""
    return len(shape) == len(expected) and all(
        size is None or size == found for size, found in zip(expected[1:], shape[1:]))


def _as_target(target):
    """A target as a Tensor; a vector becomes a column, as Keras 2 makes every 1-D target.

    Losses and metrics of users then see ``y_true`` of shape (samples, 1)
    beside a (samples, 1) output, rather than broadcasting to (samples, samples).
    """
    target = target if isinstance(target, Tensor) else Tensor(np.asarray(target))
    if target.ndim != 1:
        return target
    # Targets are data (Batch.take wraps arrays; they never require gradients), so the
    # column is a view of the array, not an operation recorded like the model's.
    return Tensor.wrap(target.data.reshape(len(target), 1))


def _is_temporal(mode):
    if mode not in (None, 'temporal'):
        raise ValueError(f'sample_weight_mode must be None or "temporal", got {mode!r}')
    return mode == 'temporal'


def _masked(per_step, mask, output_name):
    """Losses of masked steps zeroed, the others scaled by ``1 / mean(mask)``.

    Keras 2's rule: the loss is then the mean over the unmasked steps of the
    part of the batch computed here (the whole batch in one process; each
    micro-shard, or each process's share, in minidl_dist). A part with no
    unmasked step adds nothing.
    """
    if tuple(mask.shape) != tuple(per_step.shape[:mask.ndim]):
        raise ValueError(f'output {output_name!r} has a mask of shape {tuple(mask.shape)}, '
                         f'but its loss gives values of shape {tuple(per_step.shape)}; a '
                         f'masked output needs a loss per time step (shape (samples, '
                         f'timesteps)), as Keras\'s losses give')
    weights = mask.data.astype(per_step.dtype)
    mean = float(weights.mean()) if weights.size else 0.0
    if mean:
        weights = weights / per_step.xp.asarray(mean, per_step.dtype)
    weights = weights.reshape(weights.shape + (1,) * (per_step.ndim - weights.ndim))
    return per_step * Tensor.wrap(weights)


def output_mask_weights(output, sample_weight):
    """The weights of a masked output's steps for its metrics: the mask, times the
    sample weights (broadcast along time, or per step when temporal)."""
    mask = getattr(output, '_keras_mask', None)
    if mask is None:
        return sample_weight
    weights = mask.data.astype(output.dtype)
    if sample_weight is not None:
        given = sample_weight.data.astype(output.dtype)
        weights = weights * given.reshape(given.shape + (1,) * (weights.ndim - given.ndim))
    return Tensor.wrap(weights)


def _consumes_mask(loss):
    """Whether ``loss`` (a Loss, or a function with the attribute) reads the output's mask."""
    return bool(getattr(loss, 'consumes_mask', False) or
                getattr(getattr(loss, 'fn', None), 'consumes_mask', False))


def _summed_loss(loss, target, output, weight, local_count, temporal, output_name):
    """Sum over this part's samples of the (sample-weighted) loss of one output.

    Weights of shape ``(samples,)`` weigh each sample's mean loss; with
    ``temporal``, weights of shape ``(samples, timesteps)`` weigh each time
    step's loss before the mean over time steps (Keras 2.3's rule: the mean
    over all time steps of the weighted losses, zero weights included).
    """
    per_sample = loss.per_sample(target, output) if hasattr(loss, 'per_sample') \
        else loss(target, output)
    if not isinstance(per_sample, Tensor):
        raise TypeError(f'the loss {loss!r} returned {type(per_sample).__name__}, not a Tensor')
    if per_sample.ndim == 0:
        # A loss that already averages over the batch: undo the mean.
        return per_sample * local_count
    mask = getattr(output, '_keras_mask', None)
    if mask is not None and not _consumes_mask(loss):
        per_sample = _masked(per_sample, mask, output_name)
    if temporal and weight is not None:
        if per_sample.ndim < 2 or tuple(weight.shape) != tuple(per_sample.shape[:2]):
            raise ValueError(f'output {output_name!r}: temporal sample weights of shape '
                             f'{tuple(weight.shape)} do not match its per-time-step losses of '
                             f'shape {tuple(per_sample.shape[:2])} (samples, timesteps)')
        if per_sample.ndim > 2:
            per_sample = per_sample.mean(axis=tuple(range(2, per_sample.ndim)))
        return (per_sample * weight).mean(axis=1).sum()
    if per_sample.ndim > 1:
        per_sample = per_sample.mean(axis=tuple(range(1, per_sample.ndim)))
    if weight is not None:
        if weight.size != local_count:
            raise ValueError(f'output {output_name!r}: sample weights of shape '
                             f'{tuple(weight.shape)} for {local_count} samples; for one weight '
                             f'per time step, compile with sample_weight_mode="temporal"')
        per_sample = per_sample * weight.reshape((local_count,))
    return per_sample.sum()
