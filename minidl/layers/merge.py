"""Merge layers (Keras 2): combine a list of tensors into one.

Elementwise merges (Add, Subtract, Multiply, Average, Maximum, Minimum)
follow Keras's shape rule: the batch sizes must agree, the other axes
broadcast as in numpy (aligned at the end, size 1 stretches), a tensor of
lower rank gaining its missing axes right after the batch axis.
Concatenate needs equal sizes except along its axis; Dot contracts one
axis of each of two inputs per sample. Each class has a lowercase
functional form: ``add([a, b])`` is ``Add()([a, b])``.
"""

from minidl import functions as F
from minidl.layers.base import Layer
from minidl.layers.masking import all_masks, concatenated_mask


def _input_shapes(layer, shapes, exactly=None):
    """``shapes`` as a list of tuples, checked to be a list of the right length."""
    if not isinstance(shapes, list) or not all(isinstance(s, tuple) for s in shapes):
        raise ValueError(f'layer {layer.name!r} ({type(layer).__name__}) must be called on a '
                         f'list of tensors, got an input of shape {shapes}')
    if exactly is not None and len(shapes) != exactly:
        raise ValueError(f'layer {layer.name!r} ({type(layer).__name__}) must be called on '
                         f'exactly {exactly} inputs, got {len(shapes)}: {shapes}')
    if not shapes:
        raise ValueError(f'layer {layer.name!r} ({type(layer).__name__}) must be called on a '
                         f'list of at least one tensor, got an empty list')
    return shapes


def _batch_size(layer, shapes):
    """The batch size the inputs agree on (None if unknown), or a ValueError naming them."""
    batch_sizes = {shape[0] for shape in shapes if shape} - {None}
    if len(batch_sizes) > 1:
        raise ValueError(f'layer {layer.name!r} ({type(layer).__name__}) cannot merge tensors '
                         f'with different batch sizes; input shapes: {shapes}')
    return batch_sizes.pop() if batch_sizes else None


def _broadcast_shape(layer, shapes):
    """The output shape of an elementwise merge of ``shapes``, or a ValueError naming them."""
    batch_size = _batch_size(layer, shapes)
    rank = max(len(shape) for shape in shapes)
    output = []
    for axis in range(1, rank):
        sizes = {shape[axis - rank] for shape in shapes if len(shape) - 1 >= rank - axis}
        known = sizes - {None, 1}
        if len(known) > 1:
            raise ValueError(f'layer {layer.name!r} ({type(layer).__name__}): inputs of shapes '
                             f'{shapes} cannot be broadcast together (axis {axis} has sizes '
                             f'{sorted(known)})')
        output.append(known.pop() if known else None if None in sizes else 1)
    return (batch_size,) + tuple(output)


class _Merge(Layer):
    """Elementwise merge; subclasses define ``_merge(tensors)`` on tensors of one rank."""

    inputs_expected = None

    def compute_mask(self, inputs, mask=None):
        """Unmasked where every input's mask is (Keras 2)."""
        masks = [m for m in (mask or []) if m is not None]
        return all_masks(masks) if masks else None

    def compute_output_shape(self, input_shape):
        shapes = _input_shapes(self, input_shape, self.inputs_expected)
        return _broadcast_shape(self, shapes)

    def call(self, inputs):
        shapes = _input_shapes(self, [tuple(x.shape) for x in inputs] if isinstance(
            inputs, list) else inputs.shape, self.inputs_expected)
        _broadcast_shape(self, shapes)
        rank = max(len(shape) for shape in shapes)
        tensors = [x if x.ndim == rank else F.reshape(x, x.shape[:1] + (1,) * (rank - x.ndim)
                                                      + x.shape[1:])
                   for x in inputs]
        return self._merge(tensors)


class Add(_Merge):
    """Sum of the inputs: ``Add()([a, b, ...])``."""

    def _merge(self, tensors):
        output = tensors[0]
        for tensor in tensors[1:]:
            output = F.add(output, tensor)
        return output


class Subtract(_Merge):
    """Difference of exactly two inputs: ``Subtract()([a, b])`` is ``a - b``."""

    inputs_expected = 2

    def _merge(self, tensors):
        return F.sub(tensors[0], tensors[1])


class Multiply(_Merge):
    """Elementwise product of the inputs."""

    def _merge(self, tensors):
        output = tensors[0]
        for tensor in tensors[1:]:
            output = F.mul(output, tensor)
        return output


class Average(_Merge):
    """Elementwise mean of the inputs (their sum in list order, divided by their count)."""

    def _merge(self, tensors):
        total = tensors[0]
        for tensor in tensors[1:]:
            total = F.add(total, tensor)
        return F.div(total, float(len(tensors)))


class Maximum(_Merge):
    """Elementwise maximum of the inputs (on ties the gradient goes to the earliest)."""

    def _merge(self, tensors):
        output = tensors[0]
        for tensor in tensors[1:]:
            output = F.maximum(output, tensor)
        return output


class Minimum(_Merge):
    """Elementwise minimum of the inputs (on ties the gradient goes to the earliest)."""

    def _merge(self, tensors):
        output = tensors[0]
        for tensor in tensors[1:]:
            output = F.minimum(output, tensor)
        return output


class Concatenate(Layer):
    """Join the inputs along ``axis``; all other sizes must match.

    Args:
        axis: The axis to join along (the last by default).
    """

    def __init__(self, axis=-1, **kwargs):
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f'Concatenate: axis must be an int, got {axis!r}')
        super().__init__(**kwargs)
        self.axis = axis

    def compute_output_shape(self, input_shape):
        shapes = _input_shapes(self, input_shape)
        rank = len(shapes[0])
        if any(len(shape) != rank for shape in shapes) or not -rank <= self.axis < rank:
            raise ValueError(f'layer {self.name!r} (Concatenate, axis={self.axis}) needs inputs '
                             f'of one rank with that axis; got input shapes {shapes}')
        axis = self.axis % rank
        output = []
        for index in range(rank):
            sizes = [shape[index] for shape in shapes]
            if index == axis:
                output.append(None if None in sizes else sum(sizes))
                continue
            known = set(sizes) - {None}
            if len(known) > 1:
                raise ValueError(f'layer {self.name!r} (Concatenate, axis={self.axis}) needs '
                                 f'inputs with matching shapes except along the concatenation '
                                 f'axis; got input shapes {shapes}')
            output.append(known.pop() if known else None)
        return tuple(output)

    def call(self, inputs):
        self.compute_output_shape(
            [tuple(x.shape) for x in inputs] if isinstance(inputs, list) else inputs.shape)
        return F.concat(inputs, axis=self.axis % inputs[0].ndim)

    def compute_mask(self, inputs, mask=None):
        if mask is None or all(m is None for m in mask):
            return None
        return concatenated_mask(inputs, mask, self.axis)

    def get_config(self):
        config = super().get_config()
        config['axis'] = self.axis
        return config


class Dot(Layer):
    """Per-sample dot product of two inputs along one axis of each.

    For inputs (batch, m, k) and (batch, k, n) with ``axes=(2, 1)`` the
    output is their batched matrix product (batch, m, n); two vectors
    (batch, k) give (batch, 1).

    Args:
        axes: The axis to contract, an int for both inputs or a pair (one
            per input); axis 0 (the batch) cannot be contracted.
        normalize: L2-normalise both inputs along those axes first, making
            the output their cosine similarity.
    """

    def __init__(self, axes, normalize=False, **kwargs):
        pair = (axes, axes) if isinstance(axes, int) else tuple(axes)
        if len(pair) != 2 or not all(isinstance(a, int) and not isinstance(a, bool)
                                     for a in pair):
            raise ValueError(f'Dot: axes must be an int or a pair of ints, got {axes!r}')
        super().__init__(**kwargs)
        self.axes, self.normalize = axes if isinstance(axes, int) else pair, bool(normalize)

    def _resolve_axes(self, shapes):
        """The two contracted axes as non-negative indices, checked against ``shapes``."""
        pair = (self.axes, self.axes) if isinstance(self.axes, int) else self.axes
        axes = []
        for axis, shape in zip(pair, shapes):
            if not -len(shape) <= axis < len(shape) or axis % len(shape) == 0:
                raise ValueError(f'layer {self.name!r} (Dot, axes={self.axes}): axis {axis} is '
                                 f'not a non-batch axis of an input of shape {shape}')
            axes.append(axis % len(shape))
        first, second = shapes[0][axes[0]], shapes[1][axes[1]]
        if first is not None and second is not None and first != second:
            raise ValueError(f'layer {self.name!r} (Dot, axes={self.axes}): contracted sizes '
                             f'differ ({first} != {second}); input shapes {shapes}')
        return axes

    def compute_output_shape(self, input_shape):
        shapes = _input_shapes(self, input_shape, exactly=2)
        _batch_size(self, shapes)
        axes = self._resolve_axes(shapes)
        first = [size for index, size in enumerate(shapes[0]) if index != axes[0]]
        second = [size for index, size in enumerate(shapes[1][1:], 1) if index != axes[1]]
        output = tuple(first + second)
        return output + (1,) if len(output) == 1 else output

    def call(self, inputs):
        shapes = [tuple(x.shape) for x in inputs] if isinstance(inputs, list) else inputs.shape
        output_shape = self.compute_output_shape(shapes)
        x, y = inputs
        axes = self._resolve_axes(shapes)
        if self.normalize:
            x, y = _l2_normalize(x, axes[0]), _l2_normalize(y, axes[1])
        # Batched matrix product: x as (batch, rest, k), y as (batch, k, rest).
        x = _move_axis(x, axes[0], x.ndim - 1)
        y = _move_axis(y, axes[1], 1)
        batch, size = x.shape[0], x.shape[-1]
        product = F.matmul(F.reshape(x, (batch, -1, size)), F.reshape(y, (batch, size, -1)))
        return F.reshape(product, (batch,) + output_shape[1:])

    def get_config(self):
        config = super().get_config()
        config.update({'axes': self.axes, 'normalize': self.normalize})
        return config


def _move_axis(x, source, destination):
    if source == destination:
        return x
    order = [axis for axis in range(x.ndim) if axis != source]
    order.insert(destination, source)
    return F.transpose(x, order)


def _l2_normalize(x, axis):
    """``x / sqrt(max(sum(x**2), 1e-12))`` along ``axis``, as Keras's l2_normalize."""
    squares = F.sum(F.mul(x, x), axis=axis, keepdims=True)
    return F.div(x, F.sqrt(F.maximum(squares, 1e-12)))


def add(inputs, **kwargs):
    """``Add(**kwargs)(inputs)``: the sum of a list of tensors."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``Subtract(**kwargs)(inputs)``: the difference of two tensors."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``Multiply(**kwargs)(inputs)``: the elementwise product of a list of tensors."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``Average(**kwargs)(inputs)``: the elementwise mean of a list of tensors."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``Maximum(**kwargs)(inputs)``: the elementwise maximum of a list of tensors."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``Minimum(**kwargs)(inputs)``: the elementwise minimum of a list of tensors."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    """``Dot(axes, normalize, **kwargs)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
