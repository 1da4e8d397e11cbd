"""The Loss base class, its function wrapper, and Keras's weighting and reductions.

A Loss computes per-sample losses with ``call`` (exposed as ``per_sample``,
which a training loop uses to weight and reduce on its own) and reduces them
in ``__call__``::

    loss = CategoricalCrossentropy()
    value = loss(y_true, y_pred, sample_weight=w)   # sum(losses * w) / losses.size
"""

import minidl.functions as F
from minidl.naming import snake_case
from minidl.tensor import Tensor


class Reduction:
    """The values of ``reduction``, as Keras's ``losses.Reduction``."""

    AUTO = 'auto'
    NONE = 'none'
    SUM = 'sum'
    SUM_OVER_BATCH_SIZE = 'sum_over_batch_size'

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


def compute_weighted_loss(losses, sample_weight=None, reduction=Reduction.SUM_OVER_BATCH_SIZE):
    """Weight losses and reduce them, as Keras's ``Loss.__call__`` does.

    Args:
        losses: Tensor of per-sample (or per-element) losses.
        sample_weight: None, a number, or weights whose leading axes match
            those of ``losses`` (missing trailing axes broadcast, so weights
            of shape ``(batch,)`` weight every time step of a sample).
        reduction: 'none' (the weighted losses), 'sum', or
            'sum_over_batch_size' / 'auto' (the weighted sum divided by the
            number of losses, not by the total weight).

    Returns:
        A scalar Tensor, or one of ``losses``'s shape for 'none'.
    """
    if reduction not in Reduction.all():
        raise ValueError(f'reduction must be one of {Reduction.all()}, got {reduction!r}')
    if sample_weight is not None:
        losses = losses * _broadcastable_weights(sample_weight, losses)
    if reduction == Reduction.NONE:
        return losses
    total = F.sum(losses)
    if reduction == Reduction.SUM or losses.size == 0:
        return total
    return total / float(losses.size)


def _broadcastable_weights(sample_weight, losses):
    """``sample_weight`` as a Tensor of ``losses``'s rank that broadcasts to it."""
    if not isinstance(sample_weight, Tensor) or sample_weight.device != losses.device:
        sample_weight = Tensor(sample_weight, dtype=losses.dtype, device=losses.device)
    weights = sample_weight.data
    if weights.ndim == losses.ndim + 1 and weights.shape[-1] == 1:
        weights = weights.reshape(weights.shape[:-1])
    weights = weights.reshape(weights.shape + (1,) * (losses.ndim - weights.ndim))
    if weights.ndim != losses.ndim or any(
            w not in (1, n) for w, n in zip(weights.shape, losses.shape)):
        raise ValueError(f'sample_weight of shape {sample_weight.shape} does not broadcast to '
                         f'the losses of shape {losses.shape}')
    return Tensor.wrap(weights.astype(losses.dtype, copy=False))


class Loss:
    """Base class of losses: subclasses define ``call(y_true, y_pred)`` -> per-sample losses.

    Args:
        reduction: 'auto' or 'sum_over_batch_size' (the weighted sum over the
            number of loss elements), 'sum', or 'none'.
        name: The loss's name (default: the class name in snake case).
    """

    # True for losses that read y_pred's mask themselves (CTC's input lengths): a
    # training loop then must not weight their values by the mask again.
    consumes_mask = False

    def __init__(self, reduction=Reduction.AUTO, name=None):
        if reduction not in Reduction.all():
            raise ValueError(f'{type(self).__name__}: reduction must be one of '
                             f'{Reduction.all()}, got {reduction!r}')
        self.reduction = reduction
        self.name = name or snake_case(type(self).__name__)

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The weighted, reduced loss: a scalar Tensor, or per sample for 'none'."""
        reduction = self.reduction
        if reduction == Reduction.AUTO:
            reduction = Reduction.SUM_OVER_BATCH_SIZE
        return compute_weighted_loss(self.per_sample(y_true, y_pred), sample_weight, reduction)

    def per_sample(self, y_true, y_pred):
        """The unweighted, unreduced losses (shape ``y_pred.shape[:-1]`` for Keras's losses)."""
        return self.call(y_true, y_pred)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f'{type(self).__name__} must define call(y_true, y_pred)')

    def get_config(self):
        return {'reduction': self.reduction, 'name': self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss computed by a per-sample function ``fn(y_true, y_pred, **kwargs)``.

    Args:
        fn: The per-sample loss function.
        reduction: As for :class:`Loss`.
        name: The loss's name (default: ``fn.__name__``).
        **kwargs: Keyword arguments passed to ``fn``.
    """

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        if not callable(fn):
            raise TypeError(f'LossFunctionWrapper: fn must be callable, got {fn!r}')
        super().__init__(reduction, name or getattr(fn, '__name__', None))
        self.fn = fn
        self.fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self.fn_kwargs)

    def get_config(self):
        config = {**super().get_config(), **self.fn_kwargs}
        if type(self) is LossFunctionWrapper:
            # Saved by name; ``losses.deserialize`` looks the function up again.
            config['fn'] = self.fn.__name__
        return config
