"""A model graph drawn with matplotlib, for when Graphviz is not installed.

The layout is the simple layered one: each box goes one rank after the
furthest box feeding it (its longest path from an input), the ranks run top
to bottom (or left to right), and within a rank the boxes sit in the order
of the mean position of the boxes feeding them, which keeps most arrows
short and uncrossed. Sizes are in points, from the box text set in a
monospaced font, so the figure is exactly as large as its content.
"""

import io

FONT_SIZE = 10
CHAR_WIDTH = 0.61 * FONT_SIZE  # DejaVu Sans Mono, matplotlib's monospaced font
LINE_HEIGHT = 1.4 * FONT_SIZE
PADDING = 8
GAP_BETWEEN_RANKS = 30
GAP_WITHIN_RANK = 16
MARGIN = 10


def draw(graph, format):
    """The bytes of an image file of ``graph`` (a ``ModelGraph``) in ``format``.

    Raises:
        ImportError: If matplotlib is not installed.
        ValueError: If matplotlib cannot write ``format``.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle
    except ImportError as error:
        raise ImportError(
            f'drawing model {graph.name!r} as an image needs Graphviz (its `dot` program on '
            f'the PATH, see https://graphviz.org/download/) or matplotlib (pip install '
            f'minidl[plot]); a .dot file needs neither') from error
    texts = {key: _lines(box) for key, box in graph.boxes.items()}
    sizes = {key: (max(map(len, lines)) * CHAR_WIDTH + 2 * PADDING,
                   len(lines) * LINE_HEIGHT + 2 * PADDING) for key, lines in texts.items()}
    centers = _layout(graph, sizes)
    left = min(x - sizes[key][0] / 2 for key, (x, y) in centers.items()) - MARGIN
    right = max(x + sizes[key][0] / 2 for key, (x, y) in centers.items()) + MARGIN
    bottom = min(y - sizes[key][1] / 2 for key, (x, y) in centers.items()) - MARGIN
    top = max(y + sizes[key][1] / 2 for key, (x, y) in centers.items()) + MARGIN

    # One data unit is one point: the axes fill a figure as large as the drawing.
    figure = Figure(figsize=((right - left) / 72, (top - bottom) / 72))
    canvas = FigureCanvasAgg(figure)
    if format not in canvas.get_supported_filetypes():
        raise ValueError(f'matplotlib cannot write {format!r} images (it writes '
                         f'{", ".join(sorted(canvas.get_supported_filetypes()))}); install '
                         f'Graphviz for other formats')
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(left, right)
    axes.set_ylim(bottom, top)
    axes.axis('off')
    for key, (x, y) in centers.items():
        width, height = sizes[key]
        axes.add_patch(Rectangle((x - width / 2, y - height / 2), width, height,
                                 facecolor='white', edgecolor='black', linewidth=1))
        axes.text(x, y, '\n'.join(texts[key]), ha='center', va='center', family='monospace',
                  fontsize=FONT_SIZE, linespacing=1.4)
    for source, target in graph.edges:
        start, end = _arrow_ends(graph.rankdir, centers, sizes, source, target)
        axes.annotate('', xy=end, xytext=start, arrowprops={
            'arrowstyle': '-|>', 'color': 'black', 'linewidth': 1, 'shrinkA': 0, 'shrinkB': 0})
    buffer = io.BytesIO()
    figure.savefig(buffer, format=format, dpi=graph.dpi)
    return buffer.getvalue()


def _lines(box):
    # No frames around nested models here: their path in the title tells where a box sits.
    lines = box.lines()
    if box.cluster:
        lines[0] = f'{box.cluster}/{lines[0]}'
    return lines


def _layout(graph, sizes):
    """The center of each box, in points (y upwards)."""
    order = list(graph.boxes)
    index = {key: number for number, key in enumerate(order)}
    parents = {key: [] for key in order}
    for source, target in graph.edges:
        # A nested model reused down a chain loops back to an earlier box; such
        # an arrow is drawn but does not place boxes.
        if index[source] < index[target]:
            parents[target].append(source)
    rank = {}
    for key in order:  # the model's order puts every box after the boxes feeding it
        rank[key] = max((rank[parent] + 1 for parent in parents[key]), default=0)

    top_to_bottom = graph.rankdir == 'TB'
    along_extent = {key: size[1 if top_to_bottom else 0] for key, size in sizes.items()}
    across_extent = {key: size[0 if top_to_bottom else 1] for key, size in sizes.items()}
    across, centers, along = {}, {}, 0.0
    for current in range(max(rank.values()) + 1):
        row = [key for key in order if rank[key] == current]

        def mean_parent_position(key):
            placed = [across[parent] for parent in parents[key]]
            return sum(placed) / len(placed) if placed else 0.0

        row.sort(key=lambda key: (mean_parent_position(key), index[key]))
        thickness = max(along_extent[key] for key in row)
        cursor = -(sum(across_extent[key] for key in row)
                   + GAP_WITHIN_RANK * (len(row) - 1)) / 2
        for key in row:
            across[key] = cursor + across_extent[key] / 2
            cursor += across_extent[key] + GAP_WITHIN_RANK
            middle = along + thickness / 2
            centers[key] = (across[key], -middle) if top_to_bottom else (middle, -across[key])
        along += thickness + GAP_BETWEEN_RANKS
    return centers


def _arrow_ends(rankdir, centers, sizes, source, target):
    """From the side of ``source`` facing the next rank to the facing side of ``target``."""
    (x0, y0), (x1, y1) = centers[source], centers[target]
    (w0, h0), (w1, h1) = sizes[source], sizes[target]
    if rankdir == 'TB':
        return (x0, y0 - h0 / 2), (x1, y1 + h1 / 2)
    return (x0 + w0 / 2, y0), (x1 - w1 / 2, y1)
