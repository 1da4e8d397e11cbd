"""What ``compile`` sets up: the losses and metrics of each output, and their sums.

Every value reported in logs is kept as exact sums (of weighted losses and
of weights), never as means of means: a batch adds its sums, and the
strategy can add the sums of all processes before the mean is taken.
"""

import numpy as np

from minidl import losses as losses_module, metrics as metrics_module
from minidl.layers.nest import flatten
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
    """

    def __init__(self, output_names, output_shapes, loss, metrics=None, loss_weights=None):
        self.output_names = list(output_names)
        count = len(self.output_names)
        self.losses = [losses_module.get(item) for item in
                       self._per_output(loss, 'loss', required=True)]
        weights = self._per_output(loss_weights, 'loss_weights', default=1.0)
        self.loss_weights = [float(w) for w in weights]
        metric_lists = self._per_output_metrics(metrics)
        self.metrics = [
            [metrics_module.get(item, loss=self.losses[i], output_shape=output_shapes[i])
             for item in metric_lists[i]] for i in range(count)]
        prefix = (lambda i: '') if count == 1 else (lambda i: self.output_names[i] + '_')
        self.metric_names = [[prefix(i) + metric.name for metric in self.metrics[i]]
                             for i in range(count)]
        self.output_loss_names = [] if count == 1 else [f'{n}_loss' for n in self.output_names]
        self.reset()

    def _per_output(self, value, argument, required=False, default=None):
        count = len(self.output_names)
        if value is None:
            if required:
                raise ValueError('compile needs a loss (e.g. loss="categorical_crossentropy")')
            return [default] * count
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(self.output_names))
            if unknown:
                raise ValueError(f'{argument} names unknown output(s) {unknown}; the model\'s '
                                 f'outputs are {self.output_names}')
            if required and len(value) != count:
                missing = [name for name in self.output_names if name not in value]
                raise ValueError(f'{argument} has no entry for output(s) {missing}')
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
            y_true: Target arrays, one per output.
            y_pred: The model's output Tensors.
            sample_weight: Weights of this part's samples, or None.
            global_count: Samples in the whole global batch.
            penalties: Weight penalties (scalar Tensors) for the whole batch.

        Returns:
            Tensor: the sum of this part's weighted losses divided by the
            global count, plus the penalties scaled by this part's share of
            the batch; the parts' gradients add up to the batch's.
        """
        local_count = len(y_pred[0])
        weight = None if sample_weight is None else Tensor(sample_weight)
        total, sums = None, []
        for loss, loss_weight, target, output in zip(self.losses, self.loss_weights, y_true, y_pred):
            value = _summed_loss(loss, _as_target(target), output, weight, local_count)
            sums.append(value.item())
            term = value * loss_weight if loss_weight != 1.0 else value
            total = term if total is None else total + term
        objective = total / global_count
        share = local_count / global_count
        penalty = 0.0
        if penalties:
            penalty_sum = penalties[0]
            for extra in penalties[1:]:
                penalty_sum = penalty_sum + extra
            objective = objective + penalty_sum * share
            penalty = penalty_sum.item()
        weighted = sum(s * w for s, w in zip(sums, self.loss_weights))
        self.loss_totals[0] += weighted + penalty * local_count
        self.loss_totals[1] += local_count
        if self.output_loss_names:
            self.loss_totals[2:] += sums
        return objective

    @no_grad()
    def update_metrics(self, y_true, y_pred, sample_weight):
        """Add one part's predictions to the metric sums."""
        weight = None if sample_weight is None else Tensor(sample_weight)
        for metrics, target, output in zip(self.metrics, y_true, y_pred):
            target = _as_target(target)
            for metric in metrics:
                metric.update_state(target, output.detach(), weight)

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


def _as_target(target):
    return target if isinstance(target, Tensor) else Tensor(np.asarray(target))


def _summed_loss(loss, target, output, weight, local_count):
    """Sum over this part's samples of the (sample-weighted) loss of one output."""
    per_sample = loss.per_sample(target, output) if hasattr(loss, 'per_sample') \
        else loss(target, output)
    if not isinstance(per_sample, Tensor):
        raise TypeError(f'the loss {loss!r} returned {type(per_sample).__name__}, not a Tensor')
    if per_sample.ndim == 0:
        # A loss that already averages over the batch: undo the mean.
        return per_sample * local_count
    if per_sample.ndim > 1:
        per_sample = per_sample.mean(axis=tuple(range(1, per_sample.ndim)))
    if weight is not None:
        per_sample = per_sample * weight
    return per_sample.sum()
