"""Mixed precision: float16 computation with float32 master weights and loss scaling.

tf.keras 2.4+'s API, at its path::

    from minidl import mixed_precision
    mixed_precision.set_global_policy('mixed_float16')
    model = ...  # layers made now compute in float16, keep float32 weights
    model.compile(optimizer=mixed_precision.LossScaleOptimizer(SGD(0.1)), loss=...)

The parts live where the import rules put them: policies in
:mod:`minidl.layers.dtype_policy` (what a policy is, and why there is no
bfloat16), the casts of a layer's call in :mod:`minidl.layers.autocast`,
and the loss scaling in :mod:`minidl.optimizers.loss_scale_optimizer` (how
the scale moves and when a step is skipped). Unlike tf.keras, ``compile``
does not wrap the optimizer itself: wrap it, or gradients that underflow
float16 are lost.
"""

from minidl.layers.dtype_policy import Policy, global_policy, set_global_policy
from minidl.optimizers.loss_scale_optimizer import LossScaleOptimizer

__all__ = ['LossScaleOptimizer', 'Policy', 'global_policy', 'set_global_policy']
