"""``plot_history``: the learning curves of a ``fit`` call, as a PNG file."""

import math
import os


def plot_history(history, path, metrics=None):
    """Draw the loss and each metric per epoch, training and validation, to a PNG.

    One panel per quantity, with the training curve and, where the history
    has it, the validation curve (``val_`` + name). Needs matplotlib
    (``pip install minidl[plot]``); it is used through its Agg canvas, so no
    display is needed and pyplot's global state is left alone.

    Args:
        history: The ``History`` returned by ``fit`` (anything with a
            ``.history`` dict), or the dict itself: name -> value per epoch.
        path: The PNG file to write.
        metrics: Names to draw (without ``val_``); by default every
            training quantity in the history, the loss first.

    Returns:
        ``path``.

    Raises:
        ImportError: If matplotlib is not installed.
        ValueError: If the history is empty or lacks a name in ``metrics``.
    """
    curves = getattr(history, 'history', history)
    if not isinstance(curves, dict):
        raise ValueError(f'plot_history: expected a History or a dict, got '
                         f'{type(history).__name__}')
    trained = [name for name in curves if not name.startswith('val_')]
    if metrics is None:
        metrics = sorted(trained, key=lambda name: name != 'loss')
    else:
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        unknown = [name for name in metrics if name not in curves]
        if unknown:
            raise ValueError(f'plot_history: {unknown} not in the history, which has '
                             f'{sorted(curves)}')
    if not metrics:
        raise ValueError('plot_history: the history holds nothing to plot')
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError('plot_history needs matplotlib: pip install minidl[plot] '
                          '(or pip install matplotlib)') from error

    columns = min(len(metrics), 3)
    rows = math.ceil(len(metrics) / columns)
    figure = Figure(figsize=(4.5 * columns, 3.5 * rows), layout='constrained')
    FigureCanvasAgg(figure)
    for index, name in enumerate(metrics):
        axes = figure.add_subplot(rows, columns, index + 1)
        for label, key in (('training', name), ('validation', f'val_{name}')):
            if key in curves:
                values = list(curves[key])
                axes.plot(range(1, len(values) + 1), values, marker='.', label=label)
        axes.set_title(name)
        axes.set_xlabel('epoch')
        axes.legend()
    figure.savefig(os.fspath(path), format='png')
    return path
