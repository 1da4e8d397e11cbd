"""LossScaleOptimizer: dynamic loss scaling around another optimizer (tf.keras 2.4+'s API).

float16 gradients below 2**-24 flush to zero. Multiplying the loss by a
large *loss scale* S multiplies every gradient by S, lifting the small ones
into float16's range; the float32 gradients of the master weights are then
divided by S again before the update. Too large an S overflows to inf: the
step is then skipped and S halved. tf.keras's rules, kept here: S starts at
2**15, is halved (never below 1) at each step whose gradients are not all
finite, and doubled after ``dynamic_growth_steps`` (2000) finite steps in a
row; a skipped step leaves the weights and the optimizer's slots untouched
but counts in ``iterations``.

``fit`` asks the optimizer for the loss to differentiate
(:meth:`~minidl.optimizers.Optimizer.get_scaled_loss`), so the wrapper needs
no other hook. Unlike tf.keras's, :meth:`LossScaleOptimizer.apply_gradients`
divides the gradients itself: minidl's optimizers read ``param.grad``, which
holds the scaled loss's gradients (and the unscaled ones afterwards). Under
``minidl_dist`` the gradients are summed over the ranks before, so every rank
makes the same decision.
"""

import numpy as np

from minidl.compute import get_array_module
from minidl.optimizers.optimizer import Optimizer
from minidl.tensor import Tensor

INITIAL_SCALE = 2 ** 15
GROWTH_STEPS = 2000


class LossScaleOptimizer(Optimizer):
    """Wrap ``inner_optimizer`` in dynamic (or fixed) loss scaling.

    Args:
        inner_optimizer: The optimizer that updates the weights (an instance or a name).
        dynamic: Adjust the scale (True), or keep ``initial_scale`` fixed and
            apply every step, as tf.keras does.
        initial_scale: The first scale (2**15 when dynamic, else required).
        dynamic_growth_steps: Finite steps in a row after which the scale doubles.

    Attributes:
        loss_scale: The current scale (a float).
        good_steps: Finite steps since the scale last changed.
        last_step_skipped: Whether the latest :meth:`apply_gradients` skipped its update.

    Raises:
        ValueError: For a scale below 1, growth steps below 1, a fixed scale
            without ``initial_scale``, or an inner optimizer that is already a
            LossScaleOptimizer or updates through Keras 2's ``get_updates``.
    """

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None,
                 dynamic_growth_steps=None):
        from minidl import optimizers  # the registry, which lists this class (a cycle)
        inner = optimizers.get(inner_optimizer)
        if isinstance(inner, LossScaleOptimizer):
            raise ValueError('LossScaleOptimizer: the inner optimizer is a LossScaleOptimizer '
                             'already')
        if inner.uses_get_updates:
            raise ValueError(f'LossScaleOptimizer: {type(inner).__name__} updates through Keras '
                             f"2's get_updates, whose gradients it cannot unscale")
        if not dynamic and initial_scale is None:
            raise ValueError('LossScaleOptimizer: a fixed (dynamic=False) scale needs '
                             'initial_scale')
        if not dynamic and dynamic_growth_steps is not None:
            raise ValueError('LossScaleOptimizer: dynamic_growth_steps is for dynamic scaling')
        scale = INITIAL_SCALE if initial_scale is None else initial_scale
        if isinstance(scale, bool) or not np.isfinite(float(scale)) or float(scale) < 1:
            raise ValueError(f'LossScaleOptimizer: initial_scale must be a finite number >= 1, '
                             f'got {initial_scale!r}')
        steps = GROWTH_STEPS if dynamic_growth_steps is None else dynamic_growth_steps
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f'LossScaleOptimizer: dynamic_growth_steps must be an int >= 1, '
                             f'got {dynamic_growth_steps!r}')
        # Optimizer.__init__ is not called: the rate, clipping and iterations are the
        # inner optimizer's (read and set through the properties below).
        self._inner = inner
        self.dynamic = bool(dynamic)
        self.initial_scale = float(scale)
        self.dynamic_growth_steps = int(steps)
        self.loss_scale = float(scale)
        self.good_steps = 0
        self.last_step_skipped = False
        self.name = 'LossScaleOptimizer'

    @property
    def inner_optimizer(self):
        return self._inner

    # ----- the scaling ----------------------------------------------------------

    def get_scaled_loss(self, loss):
        """``loss`` times the loss scale (exact: the scale is a power of two)."""
        return loss * self.loss_scale

    def get_unscaled_gradients(self, grads):
        """Arrays or Tensors of gradients of the scaled loss, divided by the scale in
        their own dtype (float32 for float32 weights); None entries stay None."""
        factor = 1.0 / self.loss_scale
        unscaled = []
        for grad in grads:
            if grad is None:
                unscaled.append(None)
                continue
            data = grad.data if isinstance(grad, Tensor) else grad
            data = data * data.dtype.type(factor)
            unscaled.append(Tensor.wrap(data) if isinstance(grad, Tensor) else data)
        return unscaled

    def apply_gradients(self, params):
        """Unscale each ``param.grad``, then update through the inner optimizer, or, when
        some gradient is not finite (and the scaling is dynamic), skip the update and
        halve the scale.

        Returns:
            True when the update was applied, False when it was skipped.
        """
        params = list(params)
        having = [param for param in params if getattr(param, 'grad', None) is not None]
        for param, grad in zip(having, self.get_unscaled_gradients(
                [param.grad for param in having])):
            param.grad = grad
        finite = _all_finite([param.grad.data for param in having])
        self.last_step_skipped = self.dynamic and not finite
        if self.dynamic:
            self._update_scale(finite)
        if self.last_step_skipped:
            self._inner.iterations += 1  # as tf.keras: a skipped step still counts
            return False
        self._inner.apply_gradients(params)
        return True

    def _update_scale(self, finite):
        if not finite:
            self.loss_scale = max(self.loss_scale / 2, 1.0)
            self.good_steps = 0
        elif self.good_steps + 1 >= self.dynamic_growth_steps:
            if np.isfinite(np.float32(self.loss_scale * 2)):
                self.loss_scale *= 2
            self.good_steps = 0
        else:
            self.good_steps += 1

    # ----- what is the inner optimizer's -----------------------------------------

    @property
    def iterations(self):
        return self._inner.iterations

    @iterations.setter
    def iterations(self, value):
        self._inner.iterations = value

    @property
    def learning_rate(self):
        return self._inner.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._inner.learning_rate = value

    lr = learning_rate

    def __getattr__(self, name):
        # Hyper-parameters and options (decay, clipnorm, momentum, ...) are the inner
        # optimizer's; only attributes this object lacks come here.
        if name.startswith('__') or name == '_inner':
            raise AttributeError(name)
        return getattr(self._inner, name)

    def current_learning_rate(self):
        return self._inner.current_learning_rate()

    @property
    def slot_names(self):
        return self._inner.slot_names

    @property
    def state_names(self):
        return self._inner.state_names

    def build(self, params):
        self._inner.build(params)

    def has_slots_for(self, params):
        return self._inner.has_slots_for(params)

    @property
    def built(self):
        return self._inner.built

    def get_slot(self, param, slot_name):
        return self._inner.get_slot(param, slot_name)

    def set_slot(self, param, slot_name, array):
        self._inner.set_slot(param, slot_name, array)

    def to(self, device):
        self._inner.to(device)
        return self

    # ----- state: the inner optimizer's, then the scale and the count -------------

    def weight_names(self):
        return list(self._inner.weight_names()) + [f'{self.name}/current_loss_scale:0',
                                                   f'{self.name}/good_steps:0']

    def get_weights(self):
        return list(self._inner.get_weights()) + [np.array(self.loss_scale, np.float32),
                                                  np.array(self.good_steps, np.int64)]

    def weight_shapes(self):
        return list(self._inner.weight_shapes()) + [(), ()]

    def set_weights(self, weights):
        """Restore the state of :meth:`get_weights` (the inner optimizer's, then the
        scale and the count of good steps)."""
        weights = list(weights)
        if len(weights) < 2:
            raise ValueError(f'{self.name}.set_weights: expected the inner optimizer\'s arrays, '
                             f'the loss scale and the good steps; got {len(weights)} arrays')
        scale, steps = float(np.asarray(weights[-2])), np.asarray(weights[-1])
        if not np.isfinite(scale) or scale < 1 or steps.shape != () or steps < 0:
            raise ValueError(f'{self.name}.set_weights: a loss scale >= 1 and a count >= 0 '
                             f'are needed, got {scale} and {steps}')
        self._inner.set_weights(weights[:-2])
        self.loss_scale, self.good_steps = scale, int(steps)

    @property
    def weights(self):
        return list(self._inner.weights) + [Tensor.wrap(np.array(self.loss_scale, np.float32)),
                                            Tensor.wrap(np.array(self.good_steps, np.int64))]

    @weights.setter
    def weights(self, variables):
        raise AttributeError('LossScaleOptimizer: its weights are its inner optimizer\'s')

    @property
    def uses_get_updates(self):
        return False

    # ----- config ------------------------------------------------------------------

    def get_config(self):
        """tf.keras 2.4+'s config: the inner optimizer's, and the scaling's arguments."""
        from minidl import optimizers
        config = {'inner_optimizer': optimizers.serialize(self._inner), 'dynamic': self.dynamic,
                  'initial_scale': self.initial_scale}
        if self.dynamic:
            config['dynamic_growth_steps'] = self.dynamic_growth_steps
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minidl import optimizers
        config = dict(config)
        config['inner_optimizer'] = optimizers.deserialize(config['inner_optimizer'],
                                                           custom_objects)
        return cls(**config)


def _all_finite(arrays):
    """Whether every element of ``arrays`` is finite; one device-to-host read in all."""
    if not arrays:
        return True
    xp = get_array_module(arrays[0])
    flags = [xp.isfinite(array).all() for array in arrays]
    return bool(xp.stack(flags).all()) if xp is not np else all(flags)
