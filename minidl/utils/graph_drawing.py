"""A model graph drawn with matplotlib, for when Graphviz is not installed.

The layout is the simple layered one: each box goes one rank after the
furthest box feeding it (its longest path from an input), the ranks run top
to bottom (or left to right), and within a rank the boxes sit in the order
of the mean position of the boxes feeding them, which keeps most arrows
short and uncrossed. An arrow that skips ranks (a residual connection) runs
in a lane beside the boxes of the ranks it skips, never through them; arrows
whose skipped ranks overlap get lanes of their own. Sizes are in points,
from the box text set in a monospaced font, so the figure is exactly as
large as its content.
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
    centers, routes = _layout(graph, sizes)
    # The drawing's extent: the boxes, and the lanes of the arrows that skip ranks.
    xs = [x + side * sizes[key][0] / 2 for key, (x, y) in centers.items() for side in (-1, 1)]
    ys = [y + side * sizes[key][1] / 2 for key, (x, y) in centers.items() for side in (-1, 1)]
    xs += [x for points in routes.values() for x, y in points]
    ys += [y for points in routes.values() for x, y in points]
    left, right = min(xs) - MARGIN, max(xs) + MARGIN
    bottom, top = min(ys) - MARGIN, max(ys) + MARGIN

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
        points = routes.get((source, target))
        if points is None:
            points = _arrow_ends(graph.rankdir, centers, sizes, source, target)
        else:  # the lane's segments, then the arrow into the target
            xs, ys = zip(*points[:-1])
            axes.plot(xs, ys, color='black', linewidth=1, solid_joinstyle='round')
        axes.annotate('', xy=points[-1], xytext=points[-2], arrowprops={
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
    """The center of each box, and the path of each arrow that skips ranks, in points
    (y upwards): ``(centers, {(source, target): [point, ...]})``."""
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
    # Per rank: where its band starts along the ranks, its thickness, and the span
    # across that its boxes cover.
    across, along_center, bands, spans, along = {}, {}, [], [], 0.0
    for current in range(max(rank.values()) + 1):
        row = [key for key in order if rank[key] == current]

        def mean_parent_position(key):
            placed = [across[parent] for parent in parents[key]]
            return sum(placed) / len(placed) if placed else 0.0

        row.sort(key=lambda key: (mean_parent_position(key), index[key]))
        thickness = max(along_extent[key] for key in row)
        width = sum(across_extent[key] for key in row) + GAP_WITHIN_RANK * (len(row) - 1)
        cursor = -width / 2
        for key in row:
            across[key] = cursor + across_extent[key] / 2
            cursor += across_extent[key] + GAP_WITHIN_RANK
            along_center[key] = along + thickness / 2
        bands.append((along, along + thickness))
        spans.append([-width / 2, width / 2])
        along += thickness + GAP_BETWEEN_RANKS

    # Arrows that skip ranks: each gets a lane beside the ranks it skips, on the side
    # nearer its ends (the right on a tie), outside the boxes and the lanes already there.
    paths = {}
    for source, target in graph.edges:
        skipped = range(rank[source] + 1, rank[target])
        if index[source] >= index[target] or not skipped:
            continue
        side = -1 if across[source] + across[target] < 0 else 1
        lane = max(side * spans[r][side > 0] for r in skipped) + GAP_WITHIN_RANK
        for r in skipped:
            spans[r][side > 0] = side * lane
        lane *= side
        first, last = bands[skipped[0]][0], bands[skipped[-1]][1]
        # Leave and enter a quarter of the way towards the lane, beside the arrows
        # between neighbouring ranks, so that the two arrowheads stay apart.
        start = across[source] + side * across_extent[source] / 4
        end = across[target] + side * across_extent[target] / 4
        steps = [(start, along_center[source] + along_extent[source] / 2),
                 (start, bands[rank[source]][1]), (lane, first), (lane, last),
                 (end, bands[rank[target]][0]),
                 (end, along_center[target] - along_extent[target] / 2)]
        # A box as thick as its rank's band leaves no straight piece before its face.
        paths[source, target] = [step for number, step in enumerate(steps)
                                 if number == 0 or step != steps[number - 1]]

    def point(across_value, along_value):
        return (across_value, -along_value) if top_to_bottom else (along_value, -across_value)

    centers = {key: point(across[key], along_center[key]) for key in order}
    routes = {edge: [point(*step) for step in steps] for edge, steps in paths.items()}
    return centers, routes


def _arrow_ends(rankdir, centers, sizes, source, target):
    """From the side of ``source`` facing the next rank to the facing side of ``target``."""
    (x0, y0), (x1, y1) = centers[source], centers[target]
    (w0, h0), (w1, h1) = sizes[source], sizes[target]
    if rankdir == 'TB':
        return (x0, y0 - h0 / 2), (x1, y1 + h1 / 2)
    return (x0 + w0 / 2, y0), (x1 - w1 / 2, y1)
