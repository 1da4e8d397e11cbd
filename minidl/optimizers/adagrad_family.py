"""Adagrad and Adadelta: step sizes from accumulated squared gradients."""

from minidl.compute import get_array_module
from minidl.optimizers.optimizer import Optimizer, check_number, default_rate


class Adagrad(Optimizer):
    """Adagrad as Keras 2 computes it.

    With the accumulator ``a`` (slot 'accumulator', starting at
    ``initial_accumulator_value``, 0 as in Keras 2)::

        a += g**2
        p -= lr * g / (sqrt(a) + epsilon)

    Args:
        learning_rate: Float or LearningRateSchedule (``lr`` works too).
        initial_accumulator_value: Non-negative starting value of the
            accumulators (tf.keras starts them at 0.1).
        epsilon: Small constant for numerical stability (None: 1e-7).
        name: Prefix of the state's names.
        **kwargs: ``lr``, ``decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``.
    """

    slot_names = ('accumulator',)
    elementwise = True

    def __init__(self, learning_rate=default_rate(0.01), initial_accumulator_value=0.0,
                 epsilon=1e-07, name='Adagrad', **kwargs):
        initial = check_number('Adagrad', 'initial_accumulator_value', initial_accumulator_value)
        epsilon = check_number('Adagrad', 'epsilon', 1e-07 if epsilon is None else epsilon)
        super().__init__(learning_rate, name, **kwargs)
        self.initial_accumulator_value, self.epsilon = initial, epsilon

    def slot_initial_value(self, slot_name):
        return self.initial_accumulator_value

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        accumulator = slots['accumulator']
        accumulator += xp.square(grad)
        param -= lr * grad / (xp.sqrt(accumulator) + self.epsilon)

    def get_config(self):
        return {**super().get_config(),
                'initial_accumulator_value': self.initial_accumulator_value,
                'epsilon': self.epsilon}


class Adadelta(Optimizer):
    """Adadelta as Keras 2 computes it.

    With running averages of squared gradients ``a`` (slot 'accum_grad')
    and of squared updates ``u`` (slot 'accum_var'), both starting at 0::

        a = rho * a + (1 - rho) * g**2
        delta = sqrt(u + epsilon) / sqrt(a + epsilon) * g
        u = rho * u + (1 - rho) * delta**2
        p -= lr * delta

    Keras 2's default learning rate is 1.0, the original method of Zeiler
    (2012); tf.keras's 0.001 barely moves the weights.

    Args:
        learning_rate: Float or LearningRateSchedule (``lr`` works too).
        rho: Decay of the running averages, in [0, 1].
        epsilon: Small constant for numerical stability (None: 1e-7).
        name: Prefix of the state's names.
        **kwargs: ``lr``, ``decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``.
    """

    slot_names = ('accum_grad', 'accum_var')
    elementwise = True

    def __init__(self, learning_rate=default_rate(1.0), rho=0.95, epsilon=1e-07,
                 name='Adadelta', **kwargs):
        rho = check_number('Adadelta', 'rho', rho, 0.0, 1.0)
        epsilon = check_number('Adadelta', 'epsilon', 1e-07 if epsilon is None else epsilon)
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def update(self, param, grad, slots, step, lr):
        xp = get_array_module(param)
        grad_average, update_average = slots['accum_grad'], slots['accum_var']
        grad_average *= self.rho
        grad_average += (1.0 - self.rho) * xp.square(grad)
        delta = xp.sqrt(update_average + self.epsilon) / xp.sqrt(grad_average + self.epsilon) * grad
        update_average *= self.rho
        update_average += (1.0 - self.rho) * xp.square(delta)
        delta *= lr
        param -= delta

    def get_config(self):
        return {**super().get_config(), 'rho': self.rho, 'epsilon': self.epsilon}
