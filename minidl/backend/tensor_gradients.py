"""Gradients of a Tensor with respect to any Tensor of its graph, leaves or not.

``K.gradients(loss, x)`` on Tensors (inside a Lambda, a custom layer or a
training loop) may ask for the gradient at a tensor computed inside the
graph, not only at variables: Keras 2's mnist_swwae takes
``K.gradients(K.sum(pooled), pre_pooling)`` to find where max pooling took
its maxima. Here backward runs only through the functions that lie between
the loss and the tensors asked for, collects the gradient arriving at each,
and leaves the graph as it was: no ``.grad`` is touched and nothing is
freed, so the training step's own backward later runs through it as usual.

The gradients are constants (minidl computes no second derivatives): a loss
built from them does not differentiate through them. For a gradient that is
piecewise constant in the weights, such as max pooling's switches, that is
exact.
"""

import heapq
import itertools

from minidl.tensor import Tensor, sum_to_shape


def tensor_gradients(loss, targets):
    """The gradients of ``sum(loss)`` at each Tensor of ``targets``, as new constant Tensors.

    Args:
        loss: A Tensor.
        targets: Tensors the loss may be computed from: leaves or results
            of recorded operations. Where the loss does not depend on one
            (or it does not require gradients) its gradient is zeros.
    """
    wanted = {id(target) for target in targets}
    collected = {}
    seed = loss.xp.ones_like(loss.data)
    if id(loss) in wanted:
        collected[id(loss)] = seed
    if loss.creator is not None:
        _backward_to(loss, seed, wanted, collected)
    return [Tensor.wrap(collected[id(t)]) if id(t) in collected
            else Tensor.wrap(t.xp.zeros(t.shape, t.dtype)) for t in targets]


def _between(loss, wanted):
    """The ids of the functions on a path from a wanted tensor to ``loss``."""
    functions, stack, seen = [], [loss.creator], set()
    while stack:  # every function the loss is computed through
        function = stack.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        if function.inputs is None:
            raise RuntimeError('gradients through a graph whose saved arrays were already freed '
                               '(by a backward pass without retain_graph)')
        functions.append(function)
        stack.extend(x.creator for x in function.inputs if x.creator is not None)
    # A function's inputs come from functions of lower generations: visit those first.
    functions.sort(key=lambda function: function.generation)
    between = set()
    for function in functions:
        if any(id(x) in wanted or (x.creator is not None and id(x.creator) in between)
               for x in function.inputs):
            between.add(id(function))
    return between


def _backward_to(loss, seed, wanted, collected):
    """Walk backward from ``loss`` through the functions leading to wanted tensors,
    adding the gradient that reaches each wanted tensor to ``collected``."""
    between = _between(loss, wanted)
    if id(loss.creator) not in between:
        return
    pending = {(id(loss.creator), loss._output_index): seed}
    order = itertools.count()
    # Highest generation first: every consumer of a tensor runs before its creator.
    queue, queued = [(-loss.creator.generation, next(order), loss.creator)], {id(loss.creator)}
    while queue:
        function = heapq.heappop(queue)[2]
        grad_outputs = [pending.pop((id(function), index), None)
                        for index in range(len(function._output_meta))]
        grad_outputs = [function.xp.zeros(shape, dtype) if grad is None else grad
                        for grad, (shape, dtype) in zip(grad_outputs, function._output_meta)]
        grad_inputs = function.backward(*grad_outputs)
        if not isinstance(grad_inputs, tuple):
            grad_inputs = (grad_inputs,)
        for tensor, grad in zip(function.inputs, grad_inputs):
            if grad is None or not tensor.requires_grad:
                continue
            if grad.shape != tensor.shape:
                grad = sum_to_shape(grad, tensor.shape)
            if grad.dtype != tensor.dtype:
                grad = grad.astype(tensor.dtype)
            if id(tensor) in wanted:
                # Copied: backward may return views of the arrays it was given.
                previous = collected.get(id(tensor))
                collected[id(tensor)] = grad.copy() if previous is None else previous + grad
            creator = tensor.creator
            if creator is None or id(creator) not in between:
                continue
            slot = (id(creator), tensor._output_index)
            pending[slot] = grad if slot not in pending else pending[slot] + grad
            if id(creator) not in queued:
                queued.add(id(creator))
                heapq.heappush(queue, (-creator.generation, next(order), creator))
