"""Sequential: a plain stack of layers, each feeding the next."""

import warnings

import numpy as np

from minidl.naming import unique_name
from minidl.layers.base import Layer
from minidl.layers.input_layer import InputLayer
from minidl.layers.nest import flatten
from minidl.layers.serialization import deserialize, serialize
from minidl.layers.symbolic import SymbolicTensor
from minidl.models.model import Model


class Sequential(Model):
    """A model made of layers applied one after the other.

    The graph is made as soon as the input shape is known: from the first
    layer's ``input_shape`` (or an ``Input``/``InputLayer`` added first), from
    :meth:`build`, or from the first data the model sees (deferred build).

    Args:
        layers: Layers to add, in order.
        name: Model name ('sequential', 'sequential_1', ... by default).
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name or unique_name('sequential'))
        self._stack = []
        self._input_layer = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        """The added layers (an input layer is not listed, as in Keras)."""
        return list(self._stack)

    @layers.setter
    def layers(self, value):
        # Network assigns the graph's layers; the stack above is the truth here.
        pass

    def _tracked_layers(self):
        return list(self._stack)

    def add(self, layer):
        """Append ``layer`` (or, first, an ``Input`` tensor / InputLayer)."""
        if isinstance(layer, SymbolicTensor) and isinstance(layer.node.layer, InputLayer):
            layer = layer.node.layer
        if isinstance(layer, InputLayer):
            if self._stack or self._input_layer is not None:
                raise ValueError('an Input can only be added first to a Sequential model')
            self._input_layer = layer
            self._rebuild()
            return
        if not isinstance(layer, Layer):
            raise TypeError(f'Sequential.add takes a layer, got {layer!r}')
        if any(existing.name == layer.name for existing in self._stack):
            raise ValueError(f'Sequential model {self.name!r} already has a layer named '
                             f'{layer.name!r}; layer names must be unique')
        self._stack.append(layer)
        if self._input_layer is None and len(self._stack) == 1:
            shape = _batch_input_shape(layer)
            if shape:
                self._input_layer = InputLayer(batch_input_shape=shape,
                                               name=f'{layer.name}_input')
        self._rebuild()

    def pop(self):
        """Remove the last layer."""
        if not self._stack:
            raise TypeError('there are no layers in the model to pop')
        self._stack.pop()
        self._rebuild()

    def build(self, input_shape=None):
        """Make the graph for inputs of ``input_shape`` (batch size included)."""
        if input_shape is None:
            if self._input_layer is None:
                raise ValueError('Sequential.build needs an input_shape when no layer gives one')
        else:
            self._input_layer = InputLayer(batch_input_shape=tuple(input_shape),
                                           name=self._input_name())
        self._rebuild()

    def _rebuild(self):
        if self._input_layer is None or not self._stack:
            self.built = False
            return
        tensor = self._input_layer.output
        for layer in self._stack:
            tensor = layer(tensor)
            if len(flatten(tensor)) != 1:
                raise ValueError(f'layer {layer.name!r} has several outputs; a Sequential '
                                 f'model needs one tensor between layers (use the functional API)')
        self._init_graph(self._input_layer.output, tensor)

    def _build_once(self, shapes):
        # Deferred build: the first data fixes the input shape, the batch size left free.
        if not self.built:
            shape = shapes[0] if isinstance(shapes, list) else shapes
            self._input_layer = InputLayer(batch_input_shape=(None,) + tuple(shape[1:]),
                                           name=self._input_name())
            self._rebuild()

    def _build_for(self, xs):
        if self._stack:
            self._build_once([x.shape for x in xs])

    def get_config(self):
        """``{'name', 'layers'}``, the input layer first once the model is built."""
        layers = [serialize(layer) for layer in self._stack]
        if self._input_layer is not None:
            layers.insert(0, serialize(self._input_layer))
        return {'name': self.name, 'layers': layers}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The Sequential model that :meth:`get_config` describes."""
        if not isinstance(config, dict) or not isinstance(config.get('layers'), list):
            raise ValueError('malformed Sequential config: it needs a "layers" list')
        model = cls(name=config.get('name'))
        for entry in config['layers']:
            model.add(deserialize(entry, custom_objects))
        return model

    def predict_proba(self, x, batch_size=32, verbose=0):
        """The predictions (:meth:`predict`), with a warning if they are not all in [0, 1]."""
        probabilities = self.predict(x, batch_size=batch_size, verbose=verbose)
        if probabilities.min() < 0 or probabilities.max() > 1:
            warnings.warn(f'model {self.name!r} predicts values outside [0, 1], which are not '
                          f'probabilities; end it with a softmax or sigmoid', stacklevel=2)
        return probabilities

    def predict_classes(self, x, batch_size=32, verbose=0):
        """The predicted class of each sample, as Keras 2: the argmax over the last axis,
        or, with one output unit, 1 where the output exceeds 0.5 (int32, shape (samples, 1))."""
        probabilities = self.predict(x, batch_size=batch_size, verbose=verbose)
        if probabilities.shape[-1] > 1:
            return probabilities.argmax(axis=-1)
        return (probabilities > 0.5).astype(np.int32)

    def _input_name(self):
        # Keras names a Sequential model's implicit input after its first layer.
        return f'{self._stack[0].name}_input' if self._stack else None

    def summary(self, line_length=None, positions=None, print_fn=None):
        if not self.built:
            raise ValueError('this model has not yet been built: build it by calling it on '
                             'data, calling build(input_shape), or giving the first layer '
                             'an input_shape')
        super().summary(line_length, positions, print_fn)


def _batch_input_shape(layer):
    """The input shape ``layer`` declares: its ``batch_input_shape``, or, for a
    functional model with one input, that input's shape (so a pretrained base
    first in a Sequential builds the whole stack at once, as in Keras)."""
    if layer.batch_input_shape:
        return layer.batch_input_shape
    inputs = getattr(layer, 'inputs', None)
    if inputs and len(inputs) == 1:
        return inputs[0].shape
    return None
