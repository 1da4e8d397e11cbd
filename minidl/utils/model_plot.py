"""``plot_model`` and ``model_to_dot``: a picture of a model's graph of layers.

:func:`model_to_dot` reads the graph that the functional API recorded (the
model's nodes, and the tensors each node reads) into a :class:`ModelGraph`:
one box per layer, one arrow per pair of connected layers. The graph writes
itself as DOT text, Graphviz's language, with no pydot involved.
:func:`plot_model` writes that text (``.dot``) or an image, drawn by
Graphviz's ``dot`` program when it is on the PATH and otherwise by
matplotlib (:mod:`minidl.utils.graph_drawing`).
"""

import os
import shutil
import subprocess

from minidl.layers.nest import flatten
from minidl.layers.wrappers import Wrapper
from minidl.models.network import Network
from minidl.utils import graph_drawing

_IMAGE_FORMATS_FOR_NOTEBOOKS = ('png', 'jpg', 'jpeg', 'gif')


class Box:
    """One layer's box in a :class:`ModelGraph`.

    Attributes:
        key: Unique id in the graph: the layer's name, prefixed by the names
            of the nested models it sits in (``'encoder/z_mean'``).
        title: ``'name: Class'``, or only the class without layer names.
        shapes: ``(input text, output text)``, or None when shapes are hidden.
        cluster: Key prefix of the expanded nested model holding the box
            (``'encoder'``), '' at the top level.
    """

    def __init__(self, key, title, shapes, cluster):
        self.key, self.title, self.shapes, self.cluster = key, title, shapes, cluster

    def lines(self):
        """The box's text as lines (its title, then the shapes if shown)."""
        if self.shapes is None:
            return [self.title]
        return [self.title, f'input: {self.shapes[0]}', f'output: {self.shapes[1]}']


class ModelGraph:
    """A model's layers and their connections, ready to be written or drawn.

    Attributes:
        name: The model's name.
        boxes: Key -> the :class:`Box` of each layer, in the model's order.
        edges: ``(from key, to key)`` pairs, each once, in the model's order.
        clusters: ``(key, enclosing cluster key, name)`` of each expanded
            nested model, outer ones first ('' encloses the top level).
        rankdir: 'TB' (top to bottom) or 'LR' (left to right).
        dpi: Resolution of the images made from the graph.
    """

    def __init__(self, name, rankdir, dpi):
        self.name, self.rankdir, self.dpi = name, rankdir, dpi
        self.boxes, self.edges, self.clusters = {}, [], []

    def to_string(self):
        """The graph as DOT text (one record-shaped node per layer)."""
        lines = [f'digraph {_quote(self.name)} {{',
                 f'\tgraph [rankdir={self.rankdir}, dpi={self.dpi}];',
                 '\tnode [shape=record];']
        lines += self._cluster_lines('', '\t')
        lines += [f'\t{_quote(source)} -> {_quote(target)};' for source, target in self.edges]
        lines.append('}')
        return '\n'.join(lines) + '\n'

    def _cluster_lines(self, cluster, indent):
        # Graphviz draws a subgraph named 'cluster...' as a framed group.
        lines = [f'{indent}{_quote(box.key)} [label={_dot_string(_record_label(box))}];'
                 for box in self.boxes.values() if box.cluster == cluster]
        for inner, enclosing, label in self.clusters:
            if enclosing == cluster:
                lines.append(f'{indent}subgraph {_quote("cluster_" + inner)} {{')
                lines.append(f'{indent}\tgraph [label={_quote(label)}, labeljust=l, '
                             f'style=dashed];')
                lines += self._cluster_lines(inner, indent + '\t')
                lines.append(f'{indent}}}')
        return lines

    def create(self, prog='dot', format='png'):
        """The graph drawn as an image file's bytes (pydot's ``create``).

        Args:
            prog: The Graphviz program that lays the graph out; when it is
                not on the PATH, matplotlib draws the graph instead.
            format: The image format: 'png', 'svg', 'pdf', ... (what Graphviz,
                or else matplotlib, can write).

        Raises:
            ImportError: If neither Graphviz nor matplotlib is installed.
            RuntimeError: If Graphviz fails.
        """
        executable = _find_graphviz(prog)
        if executable is None:
            return graph_drawing.draw(self, format)
        result = subprocess.run([executable, f'-T{format}'], input=self.to_string().encode(),
                                capture_output=True, check=False)
        if result.returncode:
            raise RuntimeError(f'Graphviz {prog!r} could not draw model {self.name!r} as '
                               f'{format!r}: {result.stderr.decode(errors="replace").strip()}')
        return result.stdout

    def __str__(self):
        return self.to_string()


def _find_graphviz(prog):
    """Path of the Graphviz program ``prog``, or None if it is not on the PATH."""
    return shutil.which(prog)


def model_to_dot(model, show_shapes=False, show_layer_names=True, rankdir='TB',
                 expand_nested=False, dpi=96):
    """The graph of ``model``'s layers, as Keras's ``model_to_dot`` gives it.

    Each layer is a box titled ``'name: Class'`` (a wrapper as
    ``'name(inner): Wrapper(Inner)'``), with its input and output shapes
    when ``show_shapes``; a layer called more than once with different
    shapes shows 'multiple'. Each pair of connected layers gets one arrow,
    however many tensors pass between them.

    Args:
        model: A built ``Model`` or ``Sequential``.
        show_shapes: Show each layer's input and output shapes.
        show_layer_names: Show layer names, not only their classes.
        rankdir: 'TB' to draw from top to bottom, 'LR' from left to right.
        expand_nested: Draw the layers of nested models, each model in a
            dashed frame, instead of one box per nested model.
        dpi: Resolution of the images drawn from the graph.

    Returns:
        ModelGraph: ``str()`` or ``to_string()`` gives the DOT text,
        ``create(format='svg')`` an image (as pydot's graphs do).

    Raises:
        TypeError: If ``model`` is not a model.
        ValueError: If the model is not built yet, or ``rankdir`` is unknown.
    """
    if not isinstance(model, Network):
        raise TypeError(f'model_to_dot draws a Model or Sequential, got {model!r}')
    if not model._nodes:
        raise ValueError(f'model {model.name!r} is not built yet, so it has no graph to draw: '
                         f'give its first layer an input_shape, call build(input_shape) or '
                         f'call it on data first')
    if rankdir not in ('TB', 'LR'):
        raise ValueError(f"rankdir must be 'TB' or 'LR', got {rankdir!r}")
    graph = ModelGraph(model.name, rankdir, dpi)
    _add_model(graph, model, '', (show_shapes, show_layer_names, expand_nested))
    return graph


def _add_model(graph, model, prefix, options):
    """Add the boxes and edges of ``model``, its layer keys starting with ``prefix``."""
    show_shapes, show_layer_names, expand_nested = options

    def expanded(layer):
        return expand_nested and isinstance(layer, Network)

    for layer in _layers(model):
        if expanded(layer):
            graph.clusters.append((prefix + layer.name, prefix[:-1], layer.name))
            _add_model(graph, layer, f'{prefix}{layer.name}/', options)
            continue
        nodes = [node for node in model._nodes if node.layer is layer]
        title = _title(layer) if show_layer_names else _title(layer).partition(': ')[2]
        shapes = _shapes_text(nodes) if show_shapes else None
        key = prefix + layer.name
        graph.boxes[key] = Box(key, title, shapes, prefix[:-1])

    def producer(tensor, prefix):
        # Inside an expanded model, the box that computes the model's output.
        layer = tensor.node.layer
        if expanded(layer):
            return producer(flatten(layer.outputs)[tensor.index], f'{prefix}{layer.name}/')
        return prefix + layer.name

    for node in model._nodes:
        layer = node.layer
        if layer.computes_mask:
            continue
        for position, parent in enumerate(node.inbound):
            consumer = prefix + layer.name
            if expanded(layer):
                # The tensor feeds the nested model's input layer at the same position.
                inputs = flatten(layer.inputs)
                consumer += '/' + inputs[min(position, len(inputs) - 1)].node.layer.name
            edge = (producer(parent, prefix), consumer)
            if edge not in graph.edges:
                graph.edges.append(edge)


def _layers(model):
    """The layers of the model's graph, each once, in order (input layers included)."""
    return list(dict.fromkeys(node.layer for node in model._nodes
                              if not node.layer.computes_mask))


def _title(layer):
    name, class_name = layer.name, type(layer).__name__
    if isinstance(layer, Wrapper):
        inner = layer.layer
        name, class_name = f'{name}({inner.name})', f'{class_name}({type(inner).__name__})'
    return f'{name}: {class_name}'


def _shapes_text(nodes):
    """``(input, output)`` shape texts over the layer's calls in this graph."""
    def text(tensors):
        shapes = [tensor.shape for tensor in tensors]
        return str(shapes[0]) if len(shapes) == 1 else str(shapes)

    # An input layer reads nothing: like Keras, show its tensor as input and output.
    inputs = {text(flatten(node.inputs) or flatten(node.outputs)) for node in nodes}
    outputs = {text(flatten(node.outputs)) for node in nodes}
    return tuple(texts.pop() if len(texts) == 1 else 'multiple' for texts in (inputs, outputs))


def _quote(text):
    """A DOT string showing ``text`` as it is (in names and plain labels)."""
    return _dot_string(str(text).replace('\\', '\\\\'))


def _dot_string(text):
    # DOT's quoted strings escape only the quote; other backslashes reach the label parser.
    return '"' + text.replace('"', '\\"') + '"'


def _record_label(box):
    """Keras's record label: ``title|{input:|output:}|{{in}|{out}}``."""
    title = _escape_record(box.title)
    if box.shapes is None:
        return title
    shape_in, shape_out = (_escape_record(text) for text in box.shapes)
    return f'{title}|{{input:|output:}}|{{{{{shape_in}}}|{{{shape_out}}}}}'


def _escape_record(text):
    # Braces, bars and angle brackets structure a record; literal ones need a backslash.
    for character in '\\{}|<>':
        text = text.replace(character, '\\' + character)
    return text


def plot_model(model, to_file='model.png', show_shapes=False, show_layer_names=True,
               rankdir='TB', expand_nested=False, dpi=96):
    """Draw ``model``'s graph of layers to a file, as Keras's ``plot_model``.

    The format follows the file's extension ('png' without one). A ``.dot``
    file gets the DOT text itself. Images are drawn by Graphviz's ``dot``
    program when it is on the PATH, with the layout Keras users know;
    otherwise by matplotlib (``pip install minidl[plot]``), in layers from
    top to bottom (or left to right) with the boxes of nested models titled
    by their path.

    Args:
        model: A built ``Model`` or ``Sequential``.
        to_file: The file to write (str or path-like).
        show_shapes, show_layer_names, rankdir, expand_nested, dpi: As in
            :func:`model_to_dot`.

    Returns:
        An ``IPython.display.Image`` of the file when IPython is installed
        and the file is a PNG, JPEG or GIF image (so a notebook shows it);
        None otherwise.

    Raises:
        ImportError: If an image is asked for and neither Graphviz nor
            matplotlib is installed.
        ValueError: If the model is not built, or matplotlib cannot write
            the format.
        RuntimeError: If Graphviz fails (an unknown format, for one).
    """
    graph = model_to_dot(model, show_shapes, show_layer_names, rankdir, expand_nested, dpi)
    path = os.fspath(to_file)
    extension = os.path.splitext(path)[1][1:].lower() or 'png'
    content = graph.to_string().encode() if extension == 'dot' else graph.create(format=extension)
    with open(path, 'wb') as file:
        file.write(content)
    if extension not in _IMAGE_FORMATS_FOR_NOTEBOOKS:
        return None
    try:
        from IPython import display
    except ImportError:
        return None
    return display.Image(filename=path)
