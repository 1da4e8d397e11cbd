"""Adam and its variants: AdamW (decoupled weight decay), Nadam (Nesterov momentum), Adamax."""

import math

from minidl.compute import get_array_module
from minidl.optimizers.optimizer import Optimizer, check_number, default_rate


def _check_beta(owner, argument, value):
    value = check_number(owner, argument, value, 0.0, 1.0)
    if value == 1.0:
        raise ValueError(f'{owner}: {argument} must be below 1, got {value}')
    return value


def _update_moments(xp, grad, slots, beta_1, beta_2, scratch):
    """``m = b1 m + (1 - b1) g`` and ``v = b2 v + (1 - b2) g**2``, in place; the
    products go through ``scratch`` (an array of ``grad``'s shape), not new arrays."""
    first, second = slots['m'], slots['v']
    first *= beta_1
    first += xp.multiply(grad, 1.0 - beta_1, out=scratch)
    second *= beta_2
    squared = xp.square(grad, out=scratch)
    squared *= 1.0 - beta_2
    second += squared
    return first, second


class Adam(Optimizer):
    """Adam as Keras 2 computes it (``epsilon`` is Keras's "epsilon hat").

    With the moments ``m``, ``v`` (slots 'm', 'v'; and 'vhat' with amsgrad),
    all starting at 0, at step ``t`` (1 for the first update)::

        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g**2
        vhat = max(vhat, v)                          # amsgrad; then v -> vhat below
        lr_t = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)
        p -= lr_t * m / (sqrt(v) + epsilon)

    PyTorch adds its ``eps`` after dividing ``sqrt(v)`` by
    ``sqrt(1 - beta_2**t)``: the two agree when epsilon is negligible.

    Args:
        learning_rate: Float or LearningRateSchedule.
        beta_1: Decay of the first moment, in [0, 1).
        beta_2: Decay of the second moment, in [0, 1).
        epsilon: Small constant for numerical stability (None: 1e-7).
        amsgrad: Divide by the largest second moment seen so far (AMSGrad).
        name: Prefix of the state's names.
        **kwargs: ``lr``, ``decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``.
    """

    elementwise = True

    def __init__(self, learning_rate=default_rate(0.001), beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, name='Adam', **kwargs):
        owner = type(self).__name__
        beta_1, beta_2 = _check_beta(owner, 'beta_1', beta_1), _check_beta(owner, 'beta_2', beta_2)
        epsilon = check_number(owner, 'epsilon', 1e-07 if epsilon is None else epsilon)
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.amsgrad = bool(amsgrad)
        self.slot_names = ('m', 'v', 'vhat') if self.amsgrad else ('m', 'v')

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        scratch = self.scratch(grad)
        first, second = _update_moments(xp, grad, slots, self.beta_1, self.beta_2, scratch)
        if self.amsgrad:
            second = xp.maximum(slots['vhat'], second, out=slots['vhat'])
        rate = lr * math.sqrt(1.0 - self.beta_2 ** step) / (1.0 - self.beta_1 ** step)
        denominator = xp.sqrt(second, out=self.scratch(grad, 1))
        denominator += self.epsilon
        change = xp.multiply(first, rate, out=scratch)  # rate * m / denominator
        change /= denominator
        param -= change

    def get_config(self):
        return {**super().get_config(), 'beta_1': self.beta_1, 'beta_2': self.beta_2,
                'epsilon': self.epsilon, 'amsgrad': self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter), as in Keras and PyTorch.

    Each step first shrinks the parameter, then applies :class:`Adam`'s update::

        p -= lr * weight_decay * p
        (Adam's update of m, v and p)

    Args:
        learning_rate: Float or LearningRateSchedule (the decay uses the current rate).
        weight_decay: Non-negative decay per unit of learning rate.
        beta_1, beta_2, epsilon, amsgrad, name, **kwargs: As for :class:`Adam`.
    """

    def __init__(self, learning_rate=default_rate(0.001), weight_decay=0.004, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-07, amsgrad=False, name='AdamW', **kwargs):
        weight_decay = check_number('AdamW', 'weight_decay', weight_decay)
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name, **kwargs)
        self.weight_decay = weight_decay

    def update(self, param, grad, slots, step, lr):
        param *= 1.0 - lr * self.weight_decay
        super().update(param, grad, slots, step, lr)

    def get_config(self):
        return {**super().get_config(), 'weight_decay': self.weight_decay}


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), as Keras 2 computes it.

    The momentum follows the schedule ``mu_t = beta_1 * (1 - 0.5 * 0.96**(d * t))``
    with ``d = schedule_decay``; ``momentum_cache`` (saved state) is the
    product ``mu_1 ... mu_t``. At step ``t``, with ``M = momentum_cache``::

        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g**2
        m_bar = (1 - mu_t) * g / (1 - M) + mu_{t+1} * m / (1 - M * mu_{t+1})
        p -= lr * m_bar / (sqrt(v / (1 - beta_2**t)) + epsilon)

    This is PyTorch's NAdam with ``momentum_decay = schedule_decay``.

    Args:
        learning_rate: Float or LearningRateSchedule (Keras 2 refuses
            schedules here; minidl accepts them). ``lr`` works too.
        beta_1, beta_2: Decays of the moments, in [0, 1).
        epsilon: Small constant for numerical stability (None: 1e-7).
        name: Prefix of the state's names.
        **kwargs: ``schedule_decay`` (0.004; tf.keras calls it ``decay``,
            which is accepted for it); ``lr``, ``clipnorm``, ``clipvalue``,
            ``global_clipnorm``. Nadam has no time-based decay of the
            learning rate, as in Keras 2.
    """

    slot_names = ('m', 'v')
    state_names = ('momentum_cache',)
    elementwise = True

    def __init__(self, learning_rate=default_rate(0.002), beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, name='Nadam', **kwargs):
        if 'schedule_decay' in kwargs and 'decay' in kwargs:
            raise TypeError('Nadam: got both schedule_decay and decay, its tf.keras name; pass one')
        schedule_decay = kwargs.pop('schedule_decay', kwargs.pop('decay', 0.004))
        schedule_decay = check_number('Nadam', 'schedule_decay', schedule_decay)
        beta_1, beta_2 = (_check_beta('Nadam', 'beta_1', beta_1),
                          _check_beta('Nadam', 'beta_2', beta_2))
        epsilon = check_number('Nadam', 'epsilon', 1e-07 if epsilon is None else epsilon)
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.schedule_decay = schedule_decay
        self.momentum_cache = 1.0

    def _momentum(self, step):
        return self.beta_1 * (1.0 - 0.5 * 0.96 ** (self.schedule_decay * step))

    def begin_step(self, step, lr):
        self.momentum_cache *= self._momentum(step)

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        first, second = _update_moments(xp, grad, slots, self.beta_1, self.beta_2,
                                        self.scratch(grad))
        momentum, momentum_next = self._momentum(step), self._momentum(step + 1)
        product, product_next = self.momentum_cache, self.momentum_cache * momentum_next
        denominator = xp.sqrt(second / (1.0 - self.beta_2 ** step))
        denominator += self.epsilon
        m_bar = ((1.0 - momentum) / (1.0 - product)) * grad
        m_bar += (momentum_next / (1.0 - product_next)) * first
        param -= lr * m_bar / denominator

    def get_config(self):
        config = {**super().get_config(), 'beta_1': self.beta_1, 'beta_2': self.beta_2,
                  'epsilon': self.epsilon, 'schedule_decay': self.schedule_decay}
        del config['decay']  # Keras 2's Nadam has no time-based decay
        return config


class Adamax(Optimizer):
    """Adamax, Adam with the infinity norm (Kingma and Ba, section 7), as Keras 2 computes it.

    With the first moment ``m`` and the decayed largest gradient ``u``
    (slots 'm', 'u'), both starting at 0, at step ``t``::

        m = beta_1 * m + (1 - beta_1) * g
        u = max(beta_2 * u, |g|)
        p -= lr / (1 - beta_1**t) * m / (u + epsilon)

    PyTorch's Adamax adds its ``eps`` to ``|g|`` inside the maximum: the two
    agree when epsilon is negligible.

    Args:
        learning_rate: Float or LearningRateSchedule (``lr`` works too).
        beta_1: Decay of the first moment, in [0, 1).
        beta_2: Decay of the largest gradient, in [0, 1).
        epsilon: Small constant for numerical stability (None: 1e-7).
        name: Prefix of the state's names.
        **kwargs: ``lr``, ``decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``.
    """

    slot_names = ('m', 'u')
    elementwise = True

    def __init__(self, learning_rate=default_rate(0.002), beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, name='Adamax', **kwargs):
        beta_1, beta_2 = (_check_beta('Adamax', 'beta_1', beta_1),
                          _check_beta('Adamax', 'beta_2', beta_2))
        epsilon = check_number('Adamax', 'epsilon', 1e-07 if epsilon is None else epsilon)
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        first, largest = slots['m'], slots['u']
        first *= self.beta_1
        first += (1.0 - self.beta_1) * grad
        largest *= self.beta_2
        xp.maximum(largest, xp.abs(grad), out=largest)
        param -= (lr / (1.0 - self.beta_1 ** step)) * first / (largest + self.epsilon)

    def get_config(self):
        return {**super().get_config(), 'beta_1': self.beta_1, 'beta_2': self.beta_2,
                'epsilon': self.epsilon}
