"""What a layer accepts, checked before it computes (Keras's InputSpec)."""


class InputSpec:
    """Constraints on one input of a layer.

    Args:
        ndim: Exact number of dimensions (batch included).
        min_ndim: Smallest number of dimensions.
        axes: ``{axis: size}`` sizes that must match (e.g. ``{-1: 784}``).
        shape: Full expected shape; None entries match any size.
    """

    def __init__(self, ndim=None, min_ndim=None, axes=None, shape=None):
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def problem(self, shape):
        """Why ``shape`` does not satisfy this spec, or None if it does."""
        if self.ndim is not None and len(shape) != self.ndim:
            return f'expected ndim={self.ndim}, found ndim={len(shape)}'
        if self.min_ndim is not None and len(shape) < self.min_ndim:
            return f'expected min_ndim={self.min_ndim}, found ndim={len(shape)}'
        for axis, size in self.axes.items():
            found = shape[axis] if -len(shape) <= axis < len(shape) else None
            if size is not None and found is not None and found != size:
                return f'expected axis {axis} of the input to have size {size}, found {found}'
        if self.shape is not None:
            for expected, found in zip(self.shape[1:], shape[1:]):
                if expected is not None and found is not None and expected != found:
                    return f'expected shape {self.shape}, found {tuple(shape)}'
        return None


def check_input_specs(layer, shapes):
    """Raise a ValueError naming ``layer`` and the shapes if an input breaks its spec."""
    specs = layer.input_spec
    if specs is None:
        return
    specs = specs if isinstance(specs, list) else [specs]
    shapes = shapes if isinstance(shapes, list) else [shapes]
    if len(specs) != len(shapes):
        raise ValueError(f'layer {layer.name!r} expects {len(specs)} input(s), '
                         f'but it received {len(shapes)}')
    for index, (spec, shape) in enumerate(zip(specs, shapes)):
        problem = spec and spec.problem(tuple(shape))
        if problem:
            raise ValueError(f'input {index} of layer {layer.name!r} is incompatible with the '
                             f'layer: {problem}; full shape received: {tuple(shape)}')
