"""Losses of ``(labels, predictions)``, in Keras's argument order, per sample.

Each function returns one loss per sample and leaves the reduction over the
batch to the caller: categorical losses reduce the class axis; the others
average over the last axis, as Keras 2 does.
"""

from minidl.functions.activation import _log_softmax_parts, _sigmoid, _softmax_axis
from minidl.tensor import Function

# Keras's backend epsilon(), which clips probabilities away from 0 and 1.
_EPSILON = 1e-7


class SoftmaxCrossEntropy(Function):
    """Log-softmax and cross-entropy fused: the logits' gradient is softmax - target."""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, labels, logits):
        xp = self.xp
        axis = self.axis = _softmax_axis('softmax_cross_entropy', logits, self.axis)
        self.sparse = labels.dtype.kind in 'iu'
        _check_cross_entropy_labels(labels, logits, axis, self.sparse)
        shifted, log_total, self.probabilities = _log_softmax_parts(
            xp, logits, axis, with_softmax=self.needs_input_grad[1])
        if self.sparse:
            self.labels = labels.reshape(log_total.shape)  # the class axis kept, of size 1
            loss = log_total - xp.take_along_axis(shifted, self.labels, axis=axis)
        else:
            self.labels = labels.astype(logits.dtype, copy=False)
            log_probabilities = xp.subtract(shifted, log_total, out=shifted)
            if self.needs_input_grad[0]:
                self.log_probabilities = log_probabilities
            loss = -(self.labels * log_probabilities).sum(axis=axis, keepdims=True)
        return xp.squeeze(loss, axis)

    def backward(self, grad):
        xp = self.xp
        axis = self.axis
        grad = grad.reshape(grad.shape[:axis] + (1,) + grad.shape[axis:])  # the class axis back
        grad_labels = grad_logits = None
        if self.needs_input_grad[1]:
            if self.sparse:
                shape = [1] * self.probabilities.ndim
                shape[axis] = self.probabilities.shape[axis]
                target = xp.arange(shape[axis]).reshape(shape) == self.labels
                grad_logits = self.probabilities - target
            else:
                # Targets need not sum to one: d/dx -sum(t log softmax(x)) = softmax * sum(t) - t.
                grad_logits = self.probabilities * self.labels.sum(axis=axis, keepdims=True)
                grad_logits -= self.labels
            grad_logits *= grad
        if self.needs_input_grad[0]:
            grad_labels = -self.log_probabilities * grad
        return grad_labels, grad_logits


class _MeanOverLastAxis(Function):
    """An elementwise loss averaged over the last axis.

    Subclasses define ``elementwise(labels, predictions)``, saving what they
    need, and ``partial_predictions()``, returning a new array;
    ``partial_labels()`` defaults to its negative, right for losses of
    ``predictions - labels``.
    """

    name = ''

    def forward(self, labels, predictions):
        _check_same_shape(self.name, labels, predictions)
        self.count = predictions.shape[-1]
        values = self.elementwise(labels.astype(predictions.dtype, copy=False), predictions)
        return values.mean(axis=-1)

    def backward(self, grad):
        scale = self.xp.expand_dims(grad, -1) / self.count
        grad_labels = grad_predictions = None
        if self.needs_input_grad[0]:
            grad_labels = self.partial_labels()
            grad_labels *= scale
        if self.needs_input_grad[1]:
            grad_predictions = self.partial_predictions()
            grad_predictions *= scale
        return grad_labels, grad_predictions

    def partial_labels(self):
        return -self.partial_predictions()


class MeanSquaredError(_MeanOverLastAxis):
    name = 'mse'

    def elementwise(self, labels, predictions):
        self.error = predictions - labels
        return self.error * self.error

    def partial_predictions(self):
        return 2 * self.error


class MeanAbsoluteError(_MeanOverLastAxis):
    name = 'mae'

    def elementwise(self, labels, predictions):
        self.error = predictions - labels
        return self.xp.abs(self.error)

    def partial_predictions(self):
        return self.xp.sign(self.error)


class Huber(_MeanOverLastAxis):
    """``e^2 / 2`` where ``|e| <= delta``, else ``delta (|e| - delta / 2)``."""

    name = 'huber'

    def __init__(self, delta):
        self.delta = delta

    def elementwise(self, labels, predictions):
        xp = self.xp
        self.error = predictions - labels
        magnitude = xp.abs(self.error)
        # With q = min(|e|, delta), q (|e| - q / 2) gives both branches without a select.
        quadratic = xp.minimum(magnitude, self.delta)
        magnitude -= 0.5 * quadratic
        magnitude *= quadratic
        return magnitude

    def partial_predictions(self):
        return self.xp.clip(self.error, -self.delta, self.delta)


class BinaryCrossEntropy(_MeanOverLastAxis):
    """Keras 2's cross-entropy of probabilities clipped to [eps, 1 - eps]."""

    name = 'binary_cross_entropy'

    def elementwise(self, labels, predictions):
        xp = self.xp
        self.labels, self.predictions = labels, predictions
        # Keras clips, then still adds epsilon inside both logarithms.
        clipped = xp.clip(predictions, _EPSILON, 1 - _EPSILON)
        self.negative = 1 - clipped
        self.negative += _EPSILON
        clipped += _EPSILON
        self.positive = clipped
        self.log_positive = xp.log(self.positive)
        self.log_negative = xp.log(self.negative)
        loss = labels * (self.log_negative - self.log_positive)
        loss -= self.log_negative
        return loss

    def partial_predictions(self):
        slope = (1 - self.labels) / self.negative
        slope -= self.labels / self.positive
        # Clipping passes no gradient outside [eps, 1 - eps].
        slope *= (self.predictions >= _EPSILON) & (self.predictions <= 1 - _EPSILON)
        return slope

    def partial_labels(self):
        return self.log_negative - self.log_positive


class SigmoidCrossEntropy(_MeanOverLastAxis):
    """Binary cross-entropy of logits, ``max(x, 0) - x z + log(1 + exp(-|x|))``."""

    name = 'binary_cross_entropy'

    def elementwise(self, labels, logits):
        xp = self.xp
        self.labels, self.logits = labels, logits
        loss = xp.abs(logits)
        xp.negative(loss, out=loss)
        xp.exp(loss, out=loss)
        xp.log1p(loss, out=loss)
        loss += xp.maximum(logits, 0)
        loss -= logits * labels
        return loss

    def partial_predictions(self):
        slope = _sigmoid(self.logits)
        slope -= self.labels
        return slope

    def partial_labels(self):
        return -self.logits


def _check_cross_entropy_labels(labels, logits, axis, sparse):
    if logits.dtype.kind != 'f':
        raise TypeError(f'softmax_cross_entropy needs floating logits, got {logits.dtype}')
    classes = logits.shape[axis]
    if not sparse:
        if labels.shape != logits.shape:
            raise ValueError(
                f'softmax_cross_entropy: probability labels of shape {labels.shape} do not '
                f'match logits of shape {logits.shape} (integer labels are class indices)')
        return
    expected = logits.shape[:axis] + logits.shape[axis + 1:]
    if labels.shape != expected:
        raise ValueError(
            f'softmax_cross_entropy: integer labels are class indices and need shape '
            f'{expected} for logits of shape {logits.shape} (class axis {axis}), got '
            f'{labels.shape}; pass one-hot labels as floats')
    if labels.size:
        low, high = int(labels.min()), int(labels.max())
        if low < 0 or high >= classes:
            raise ValueError(f'softmax_cross_entropy: labels must lie in [0, {classes}) for '
                             f'{classes} classes, got values from {low} to {high}')


def _check_same_shape(name, labels, predictions):
    if predictions.dtype.kind != 'f':
        raise TypeError(f'{name} needs floating predictions, got {predictions.dtype}')
    if labels.shape != predictions.shape:
        raise ValueError(f'{name}: labels of shape {labels.shape} do not match predictions '
                         f'of shape {predictions.shape}')
    if predictions.ndim == 0:
        raise ValueError(f'{name} averages over the last axis and needs at least 1-D inputs')


def softmax_cross_entropy(labels, logits, axis=-1):
    """Cross-entropy between labels and the softmax of ``logits``, per sample.

    Args:
        labels: Integer class indices, of the shape of ``logits`` without
            ``axis``; or floating one-hot vectors or probabilities, of the
            shape of ``logits``.
        logits: Unnormalized log-probabilities.
        axis: The class axis of ``logits``.

    Returns:
        The losses, of the shape of ``logits`` without ``axis``.

    Raises:
        ValueError: If the shapes disagree or an integer label is out of range.
    """
    return SoftmaxCrossEntropy(axis)(labels, logits)


def binary_cross_entropy(labels, predictions, from_logits=False):
    """Binary cross-entropy averaged over the last axis, as Keras 2 computes it.

    Args:
        labels: Targets in [0, 1], of the shape of ``predictions``.
        predictions: Probabilities, clipped to ``[1e-7, 1 - 1e-7]`` as Keras
            does; or logits when ``from_logits`` is true.
        from_logits: Whether ``predictions`` are logits (computed stably,
            without forming the sigmoid).

    Returns:
        The losses, of the shape of ``predictions`` without the last axis.
    """
    function = SigmoidCrossEntropy() if from_logits else BinaryCrossEntropy()
    return function(labels, predictions)


def mse(labels, predictions):
    """Mean squared error over the last axis."""
    return MeanSquaredError()(labels, predictions)


def mae(labels, predictions):
    """Mean absolute error over the last axis."""
    return MeanAbsoluteError()(labels, predictions)


def huber(labels, predictions, delta=1.0):
    """Huber loss over the last axis: quadratic within ``delta``, linear beyond.

    Args:
        labels: Targets, of the shape of ``predictions``.
        predictions: Predictions.
        delta: Positive threshold between the quadratic and linear parts.

    Returns:
        The losses, of the shape of ``predictions`` without the last axis.
    """
    if not delta > 0:
        raise ValueError(f'huber: delta must be positive, got {delta}')
    return Huber(delta)(labels, predictions)
