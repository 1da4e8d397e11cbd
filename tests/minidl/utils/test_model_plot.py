"""model_to_dot and plot_model: the graph's boxes and arrows, DOT text, images."""

import re
import shutil
import sys
import types

import numpy as np
import pytest

from minidl.layers import Add, Concatenate, Dense, Input, TimeDistributed
from minidl.models import Model, Sequential
from minidl.utils import model_plot, model_to_dot, plot_model

PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def branch_model():
    inputs = Input(shape=(4,), name='x')
    left = Dense(3, name='left')(inputs)
    right = Dense(5, name='right')(inputs)
    joined = Concatenate(name='join')([left, right])
    return Model(inputs, Dense(2, name='out')(joined), name='branchy')


def parse_dot(text):
    """{node: label} and [(from, to)] read back from DOT text."""
    labels = dict(re.findall(r'^\s*"([^"]+)" \[label="((?:[^"\\]|\\.)*)"\];$', text, re.M))
    edges = re.findall(r'^\s*"([^"]+)" -> "([^"]+)";$', text, re.M)
    return labels, edges


def test_dot_text_of_a_branching_model_has_its_edges_and_shapes():
    text = model_to_dot(branch_model(), show_shapes=True).to_string()
    labels, edges = parse_dot(text)
    assert edges == [('x', 'left'), ('x', 'right'), ('left', 'join'), ('right', 'join'),
                     ('join', 'out')]
    # Keras's record label: title | {input:|output:} | {{in}|{out}}.
    assert labels == {
        'x': 'x: InputLayer|{input:|output:}|{{(None, 4)}|{(None, 4)}}',
        'left': 'left: Dense|{input:|output:}|{{(None, 4)}|{(None, 3)}}',
        'right': 'right: Dense|{input:|output:}|{{(None, 4)}|{(None, 5)}}',
        'join': 'join: Concatenate|{input:|output:}|{{[(None, 3), (None, 5)]}|{(None, 8)}}',
        'out': 'out: Dense|{input:|output:}|{{(None, 8)}|{(None, 2)}}',
    }
    assert text.startswith('digraph "branchy" {\n\tgraph [rankdir=TB, dpi=96];')


def test_labels_without_names_or_shapes_and_wrapped_layers():
    inputs = Input(shape=(3, 4), name='seq')
    outputs = TimeDistributed(Dense(2, name='inner'), name='per_step')(inputs)
    labels, _ = parse_dot(str(model_to_dot(Model(inputs, outputs))))
    assert labels == {'seq': 'seq: InputLayer',
                      'per_step': 'per_step(inner): TimeDistributed(Dense)'}
    labels, _ = parse_dot(str(model_to_dot(Model(inputs, outputs), show_layer_names=False)))
    assert labels == {'seq': 'InputLayer', 'per_step': 'TimeDistributed(Dense)'}


def test_characters_that_structure_a_record_are_escaped():
    inputs = Input(shape=(2,), name='in')
    outputs = Dense(1, name='odd{1}|<2>\\"')(inputs)
    lines = str(model_to_dot(Model(inputs, outputs))).splitlines()
    # In a record label \{ \} \| \< \> \\ are literal; a DOT string escapes only \".
    assert '\t' + r'"odd{1}|<2>\\\"" [label="odd\{1\}\|\<2\>\\\": Dense"];' in lines
    assert '\t' + r'"in" -> "odd{1}|<2>\\\"";' in lines


def test_a_layer_called_twice_is_one_box_with_one_edge_per_source():
    a, b = Input(shape=(3,), name='a'), Input(shape=(5,), name='b')
    shared = Dense(2, name='shared')
    first, second = shared(Dense(3, name='pre')(a)), shared(Dense(3, name='pre_b')(b))
    doubled = Add(name='double')([first, second])
    same_twice = Add(name='self_sum')([doubled, doubled])
    labels, edges = parse_dot(str(model_to_dot(Model([a, b], same_twice), show_shapes=True)))
    assert sorted(edges) == sorted([('a', 'pre'), ('b', 'pre_b'), ('pre', 'shared'),
                                    ('pre_b', 'shared'), ('shared', 'double'),
                                    ('double', 'self_sum')])
    # Both calls of 'shared' read (None, 3): one shape, not 'multiple'.
    assert labels['shared'].endswith('{{(None, 3)}|{(None, 2)}}')
    assert labels['self_sum'].endswith('{{[(None, 2), (None, 2)]}|{(None, 2)}}')


def test_shapes_that_differ_between_calls_show_multiple():
    flat, sequence = Input(shape=(3,), name='flat'), Input(shape=(4, 3), name='sequence')
    shared = Dense(2, name='shared')
    model = Model([flat, sequence], [shared(flat), shared(sequence)])
    labels, _ = parse_dot(str(model_to_dot(model, show_shapes=True)))
    assert labels['shared'] == 'shared: Dense|{input:|output:}|{{multiple}|{multiple}}'


def test_expand_nested_links_the_boxes_inside_nested_models():
    encoder_input = Input(shape=(6,), name='encoder_input')
    hidden = Dense(4, name='h')(encoder_input)
    z_mean, z_log_var = Dense(2, name='z_mean')(hidden), Dense(2, name='z_log_var')(hidden)
    z = Add(name='z')([z_mean, z_log_var])
    encoder = Model(encoder_input, [z_mean, z_log_var, z], name='encoder')
    latent = Input(shape=(2,), name='z_sampling')
    decoder = Model(latent, Dense(6, name='decoded')(latent), name='decoder')
    vae = Model(encoder_input, decoder(encoder(encoder_input)[2]), name='vae')

    labels, edges = parse_dot(str(model_to_dot(vae)))
    assert edges == [('encoder_input', 'encoder'), ('encoder', 'decoder')]
    assert labels['encoder'] == 'encoder: Model'

    text = str(model_to_dot(vae, expand_nested=True))
    labels, edges = parse_dot(text)
    assert set(labels) == {'encoder_input', 'encoder/encoder_input', 'encoder/h',
                           'encoder/z_mean', 'encoder/z_log_var', 'encoder/z',
                           'decoder/z_sampling', 'decoder/decoded'}
    # The outer input feeds the encoder's input; its third output (z) feeds the decoder.
    assert ('encoder_input', 'encoder/encoder_input') in edges
    assert ('encoder/z', 'decoder/z_sampling') in edges
    assert len(edges) == 8
    assert 'subgraph "cluster_encoder" {' in text and 'subgraph "cluster_decoder" {' in text


def test_sequential_shows_its_input_layer_and_unbuilt_models_are_refused():
    model = Sequential([Dense(3, input_shape=(4,), name='first'), Dense(1, name='second')])
    _, edges = parse_dot(str(model_to_dot(model)))
    assert edges == [('first_input', 'first'), ('first', 'second')]
    unbuilt = Sequential([Dense(3)], name='later')
    with pytest.raises(ValueError, match="model 'later' is not built yet"):
        model_to_dot(unbuilt)
    with pytest.raises(ValueError, match="model 'later' is not built yet"):
        plot_model(unbuilt, 'never.png')
    with pytest.raises(TypeError, match='draws a Model or Sequential'):
        model_to_dot(Dense(3))
    with pytest.raises(ValueError, match='rankdir'):
        model_to_dot(model, rankdir='BT')


def test_a_dot_file_holds_the_dot_text(tmp_path):
    model = branch_model()
    assert plot_model(model, tmp_path / 'model.dot', show_shapes=True) is None
    expected = model_to_dot(model, show_shapes=True).to_string()
    assert (tmp_path / 'model.dot').read_text() == expected


@pytest.fixture
def without_graphviz(monkeypatch):
    monkeypatch.setattr(model_plot, '_find_graphviz', lambda prog: None)


def test_matplotlib_draws_a_png_whose_size_follows_dpi_and_direction(tmp_path, without_graphviz):
    pytest.importorskip('matplotlib')
    image = pytest.importorskip('PIL.Image')
    model = branch_model()
    plot_model(model, tmp_path / 'tb.png', show_shapes=True)
    plot_model(model, tmp_path / 'tb2x.png', show_shapes=True, dpi=192)
    plot_model(model, tmp_path / 'lr.png', show_shapes=True, rankdir='LR')
    assert (tmp_path / 'tb.png').read_bytes()[:8] == PNG_SIGNATURE
    with image.open(tmp_path / 'tb.png') as tb, image.open(tmp_path / 'tb2x.png') as tb2x, \
            image.open(tmp_path / 'lr.png') as lr:
        assert tb.format == 'PNG' and tb.size[0] > 100
        # Four ranks stacked top to bottom: taller than wide; left to right: wider.
        assert tb.size[1] > tb.size[0] and lr.size[0] > lr.size[1]
        assert all(abs(big - 2 * small) <= 2 for big, small in zip(tb2x.size, tb.size))
        dark = (np.asarray(tb.convert('L')) < 128).sum()
        assert dark > 1000  # boxes, text and arrows were drawn


def test_matplotlib_refuses_a_format_it_cannot_write(tmp_path, without_graphviz):
    pytest.importorskip('matplotlib')
    with pytest.raises(ValueError, match="cannot write 'gv' images"):
        plot_model(branch_model(), tmp_path / 'model.gv')


def test_without_graphviz_and_matplotlib_the_error_names_both(tmp_path, without_graphviz,
                                                               monkeypatch):
    for module in ('matplotlib', 'matplotlib.backends.backend_agg', 'matplotlib.figure'):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match='Graphviz.*or matplotlib'):
        plot_model(branch_model(), tmp_path / 'model.png')


def test_graphviz_gets_the_dot_text_and_its_errors_are_reported(tmp_path, monkeypatch):
    echo = tmp_path / 'fake_dot'
    # Copies the DOT text through for -Tsvg; fails like Graphviz on any other format.
    echo.write_text('#!/bin/sh\n[ "$1" = "-Tsvg" ] || { echo "bad format $1" >&2; exit 3; }\n'
                    'cat\n')
    echo.chmod(0o755)
    monkeypatch.setattr(model_plot, '_find_graphviz', lambda prog: str(echo))
    graph = model_to_dot(branch_model())
    assert graph.create(prog='dot', format='svg') == graph.to_string().encode()
    with pytest.raises(RuntimeError, match="Graphviz 'dot' could not draw .*bad format -Tpng"):
        plot_model(branch_model(), tmp_path / 'model.png')


@pytest.mark.skipif(shutil.which('dot') is None, reason='Graphviz is not installed')
def test_graphviz_draws_png_and_svg(tmp_path):
    model = branch_model()
    plot_model(model, tmp_path / 'model.png', show_shapes=True)
    assert (tmp_path / 'model.png').read_bytes()[:8] == PNG_SIGNATURE
    svg = model_to_dot(model).create(prog='dot', format='svg').decode()
    assert all(name in svg for name in ('left: Dense', 'join: Concatenate'))
    inputs = Input(shape=(2,), name='in')
    odd = Model(inputs, Dense(1, name='odd{1}|<2>\\')(inputs))
    svg = model_to_dot(odd).create(format='svg').decode()
    assert 'odd{1}|&lt;2&gt;\\: Dense' in svg


def test_notebooks_get_an_image_of_png_files_only(tmp_path, without_graphviz, monkeypatch):
    pytest.importorskip('matplotlib')
    shown = []
    ipython = types.ModuleType('IPython')
    ipython.version_info = (9, 0)
    ipython.display = types.SimpleNamespace(
        Image=lambda filename: shown.append(filename) or filename)
    monkeypatch.setitem(sys.modules, 'IPython', ipython)
    path = str(tmp_path / 'model.png')
    assert plot_model(branch_model(), path) == path and shown == [path]
    assert plot_model(branch_model(), tmp_path / 'model.svg') is None and shown == [path]


def _residual_model():
    """Two residual blocks in a row, and a skip connection that jumps both of them."""
    inputs = Input(shape=(4,), name='x')
    start = Dense(4, name='start')(inputs)
    block = start
    for number in (1, 2):
        inner = Dense(4, name=f'block{number}_b')(Dense(4, name=f'block{number}_a')(block))
        block = Add(name=f'block{number}_add')([block, inner])
    return Model(inputs, Add(name='long_add')([start, block]), name='residual')


@pytest.mark.parametrize('rankdir', ['TB', 'LR'])
def test_matplotlib_routes_skip_connections_around_the_boxes_they_bypass(rankdir):
    """Each arrow that skips ranks runs in a lane: no point of it lies inside a box other
    than its own two ends, and arrows that skip the same ranks get lanes of their own."""
    from minidl.utils import graph_drawing
    graph = model_to_dot(_residual_model(), show_shapes=True, rankdir=rankdir)
    sizes = {key: (max(map(len, lines)) * graph_drawing.CHAR_WIDTH + 2 * graph_drawing.PADDING,
                   len(lines) * graph_drawing.LINE_HEIGHT + 2 * graph_drawing.PADDING)
             for key, lines in ((key, graph_drawing._lines(box))
                                for key, box in graph.boxes.items())}
    centers, routes = graph_drawing._layout(graph, sizes)
    assert sorted(routes) == [('block1_add', 'block2_add'), ('start', 'block1_add'),
                              ('start', 'long_add')]
    for (source, target), points in routes.items():
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            for fraction in np.linspace(0, 1, 41):
                x, y = x0 + fraction * (x1 - x0), y0 + fraction * (y1 - y0)
                for key, (cx, cy) in centers.items():
                    if key in (source, target):
                        continue
                    width, height = sizes[key]
                    assert not (abs(x - cx) < width / 2 and abs(y - cy) < height / 2), \
                        f'{source} -> {target} crosses {key}'
    # The lanes: across the ranks, the coordinate the middle segment keeps. The blocks'
    # skips follow one another and share a lane; the long one passes beside them both.
    lanes = {edge: points[2][0 if rankdir == 'TB' else 1] for edge, points in routes.items()}
    assert lanes['start', 'block1_add'] == lanes['block1_add', 'block2_add']
    assert lanes['start', 'long_add'] != lanes['start', 'block1_add']


def test_matplotlib_draws_a_residual_network(tmp_path, without_graphviz):
    pytest.importorskip('matplotlib')
    plot_model(_residual_model(), tmp_path / 'residual.png', show_shapes=True)
    assert (tmp_path / 'residual.png').read_bytes()[:8] == PNG_SIGNATURE
