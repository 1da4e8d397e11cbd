"""Mixed precision: float16 computation with float32 master weights and loss scaling.

tf.keras 2.4+'s API::

    from minidl import mixed_precision
    mixed_precision.set_global_policy('mixed_float16')
    model = ...  # layers made now compute in float16, keep float32 weights
    model.compile(optimizer=mixed_precision.LossScaleOptimizer(SGD(0.1)), loss=...)

:mod:`~minidl.mixed_precision.policy` says what a policy is (and why there is
no bfloat16), :mod:`~minidl.mixed_precision.autocast` how a layer's call
casts, :mod:`~minidl.mixed_precision.loss_scale_optimizer` how the loss
scale moves and when a step is skipped. Unlike tf.keras, ``compile`` does not
wrap the optimizer itself: wrap it, or gradients that underflow float16 are lost.
"""

from minidl import optimizers as _optimizers
from minidl.mixed_precision.loss_scale_optimizer import LossScaleOptimizer
from minidl.mixed_precision.policy import Policy, global_policy, set_global_policy

_optimizers.REGISTRY.register(LossScaleOptimizer)  # so that a saved model loads

__all__ = ['LossScaleOptimizer', 'Policy', 'global_policy', 'set_global_policy']
