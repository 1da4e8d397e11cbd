"""Stochastic gradient descent, with Keras's form of (Nesterov) momentum."""

from minidl.compute import get_array_module
from minidl.optimizers.optimizer import Optimizer, check_number, default_rate


class SGD(Optimizer):
    """Gradient descent, with momentum and Nesterov momentum as Keras 2 writes them.

    With ``momentum == 0``: ``p -= lr * g``. Otherwise, with the velocity
    ``v`` (slot 'momentum', starting at 0)::

        v = momentum * v - lr * g
        p += v                           # nesterov=False
        p += momentum * v - lr * g       # nesterov=True (with the new v)

    This equals PyTorch's SGD for a constant learning rate (its buffer is
    ``-v / lr``).

    Args:
        learning_rate: Float or LearningRateSchedule.
        momentum: In [0, 1]; 0 keeps no velocity slot.
        nesterov: Use Nesterov momentum.
        name: Prefix of the state's names.
        **kwargs: ``lr``, ``decay``, ``clipnorm``, ``clipvalue``, ``global_clipnorm``
            (see :class:`Optimizer`).
    """

    elementwise = True

    def __init__(self, learning_rate=default_rate(0.01), momentum=0.0, nesterov=False,
                 name='SGD', **kwargs):
        momentum = check_number('SGD', 'momentum', momentum, 0.0, 1.0)
        super().__init__(learning_rate, name, **kwargs)
        self.momentum = momentum
        self.nesterov = bool(nesterov)
        # As in Keras, whether a velocity is kept is decided once, here.
        self.slot_names = ('momentum',) if momentum > 0 else ()

    def update(self, param, grad, slots, step, lr):
        # lr * grad goes to a scratch array: the same bits as ``lr * grad``, without a new array.
        scaled = get_array_module(param).multiply(grad, lr, out=self.scratch(grad))
        if not self.slot_names:
            param -= scaled
            return
        velocity = slots['momentum']
        velocity *= self.momentum
        velocity -= scaled
        if self.nesterov:
            scaled -= self.momentum * velocity
            param -= scaled
        else:
            param += velocity

    def get_config(self):
        return {**super().get_config(), 'momentum': self.momentum, 'nesterov': self.nesterov}
