"""RMSprop: gradients divided by a running root mean square."""

from minidl.compute import get_array_module
from minidl.optimizers.optimizer import Optimizer, check_number, default_rate


class RMSprop(Optimizer):
    """RMSprop as Keras 2 computes it, plain or centered, with or without momentum.

    With the mean square ``ms`` (slot 'rms'), the mean gradient ``mg``
    (slot 'mg', centered only) and the velocity ``mom`` (slot 'momentum',
    when ``momentum > 0``), all starting at 0::

        ms = rho * ms + (1 - rho) * g**2
        mg = rho * mg + (1 - rho) * g          # centered
        d = ms - mg**2 if centered else ms
        momentum == 0:  p -= lr * g / (sqrt(d) + epsilon)
        momentum > 0:   mom = momentum * mom + lr * g / sqrt(d + epsilon)
                        p -= mom

    Note where ``epsilon`` goes: outside the square root without momentum,
    inside it with momentum (Keras 2 calls TensorFlow's RMSProp kernel then).

    Args:
        learning_rate: Float or LearningRateSchedule.
        rho: Decay of the running averages, in [0, 1].
        momentum: In [0, 1]; 0 keeps no velocity slot.
        epsilon: Small constant for numerical stability (None: 1e-7).
        centered: Divide by the running variance instead of the mean square.
        name: Prefix of the state's names.
        **kwargs: ``lr``, ``decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``.
    """

    elementwise = True

    def __init__(self, learning_rate=default_rate(0.001), rho=0.9, momentum=0.0, epsilon=1e-07,
                 centered=False, name='RMSprop', **kwargs):
        rho = check_number('RMSprop', 'rho', rho, 0.0, 1.0)
        momentum = check_number('RMSprop', 'momentum', momentum, 0.0, 1.0)
        epsilon = check_number('RMSprop', 'epsilon', 1e-07 if epsilon is None else epsilon)
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.momentum, self.epsilon = rho, momentum, epsilon
        self.centered = bool(centered)
        # Keras 2's slot order: rms, then momentum, then mg.
        self.slot_names = ('rms',) + (('momentum',) if momentum > 0 else ()) + (
            ('mg',) if self.centered else ())

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        mean_square = slots['rms']
        mean_square *= self.rho
        mean_square += (1.0 - self.rho) * xp.square(grad)
        denominator = mean_square
        if self.centered:
            mean_grad = slots['mg']
            mean_grad *= self.rho
            mean_grad += (1.0 - self.rho) * grad
            denominator = mean_square - xp.square(mean_grad)
        if 'momentum' in slots:
            velocity = slots['momentum']
            velocity *= self.momentum
            velocity += lr * grad / xp.sqrt(denominator + self.epsilon)
            param -= velocity
        else:
            param -= lr * grad / (xp.sqrt(denominator) + self.epsilon)

    def get_config(self):
        return {**super().get_config(), 'rho': self.rho, 'momentum': self.momentum,
                'epsilon': self.epsilon, 'centered': self.centered}
