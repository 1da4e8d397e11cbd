"""A fully connected layer's computation as one Function: ``relu(x @ kernel + bias)``.

Around a small GEMM (a multilayer perceptron's batch of 128 rows), the
separate bias addition and ReLU would each allocate an output, walk it, and
record a graph node. Here the bias is added and the ReLU applied in place
on the product, and the ReLU's backward reads its mask from the output.
The arithmetic, and so every bit of the result, is that of ``matmul``,
``add`` and ``relu`` applied one after the other.

That is the reference code. For float32 numpy arrays the vendor library's
kernel runs instead where one serves it (:mod:`minidl.compute.vendor`:
oneDNN's matmul, with the bias and the ReLU fused into the product); each
call shows which branch it took in its ``vendor_kernel`` (None: the
reference code ran).
"""

from minidl.compute import products, vendor
from minidl.tensor import Function

_ACTIVATIONS = (None, 'relu')


class Dense(Function):
    """``x @ kernel (+ bias)``, then optionally ReLU, for 2-D ``x``."""

    def __init__(self, activation):
        self.relu = activation == 'relu'

    vendor_kernel = None

    def forward(self, x, kernel, bias=None):
        if x.ndim != 2 or kernel.ndim != 2 or x.shape[1] != kernel.shape[0]:
            raise ValueError(f'dense needs x (rows, features) and kernel (features, units), '
                             f'got shapes {x.shape} and {kernel.shape}')
        if bias is not None and bias.shape != kernel.shape[1:]:
            raise ValueError(f'dense: bias of shape {bias.shape} given for a kernel of shape '
                             f'{kernel.shape}; it needs shape {kernel.shape[1:]}')
        dtype = self.xp.result_type(x, kernel) if bias is None else \
            self.xp.result_type(x, kernel, bias)
        self.vendor_kernel = vendor.kernel(self.xp, 'dense', dtype, relu=self.relu)
        if self.vendor_kernel is not None:
            return self.vendor_kernel.forward(x, kernel, bias)
        return self._forward_reference(x, kernel, bias)

    def backward(self, grad):
        if self.vendor_kernel is not None:
            return self.vendor_kernel.backward(grad, self.needs_input_grad)
        return self._backward_reference(grad)

    def _forward_reference(self, x, kernel, bias):
        y = products.matmul(x, kernel, xp=self.xp)
        if bias is not None:
            y += bias
        if self.relu:
            self.xp.maximum(y, 0, out=y)
            self.y = y
        self.x, self.kernel = x, kernel
        return y

    def _backward_reference(self, grad):
        if self.relu:
            grad = grad * (self.y > 0)
        needs_x, needs_kernel = self.needs_input_grad[:2]
        grad_x = products.matmul(grad, self.kernel.T, xp=self.xp) if needs_x else None
        grad_kernel = products.matmul(self.x.T, grad, xp=self.xp) if needs_kernel else None
        if len(self.needs_input_grad) == 2:
            return grad_x, grad_kernel
        grad_bias = grad.sum(axis=0) if self.needs_input_grad[2] else None
        return grad_x, grad_kernel, grad_bias


def dense(x, kernel, bias=None, activation=None):
    """``activation(x @ kernel + bias)`` for a batch of vectors, in one graph node.

    Args:
        x: Tensor of shape ``(rows, features)``.
        kernel: Tensor of shape ``(features, units)``.
        bias: Tensor of shape ``(units,)``, or None.
        activation: None (linear) or ``'relu'``.

    Returns:
        A tensor of shape ``(rows, units)``.

    Raises:
        ValueError: If the shapes do not fit or the activation is not supported.
    """
    if activation not in _ACTIVATIONS:
        raise ValueError(f'dense: activation must be None or "relu", got {activation!r}; '
                         f'apply other activations to its output')
    function = Dense(activation)
    return function(x, kernel) if bias is None else function(x, kernel, bias)
