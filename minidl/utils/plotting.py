"""Plot a training history (loss and metrics per epoch) to an image file."""

import os

_HYPERPARAMETERS = ('lr', 'learning_rate')


def plot_history(history, path, metrics=None):
    """Draw the loss and metrics of a training run, one subplot per quantity.

    Each subplot shows the training curve and, when recorded, the validation
    curve (``'val_' + name``) against the epoch number. Drawing uses
    matplotlib's Agg canvas directly, so pyplot's global backend and figures
    are left alone and no display is needed.

    Args:
        history: The :class:`minidl.callbacks.History` returned by ``fit``,
            or its ``history`` dict (name -> list of per-epoch values).
        path: Where to write the PNG image.
        metrics: Names of the metrics to draw besides ``'loss'``; None draws
            every recorded quantity except the learning rate.

    Raises:
        ImportError: If matplotlib is not installed.
        ValueError: If the history is empty or lacks a requested metric.
    """
    logs = getattr(history, 'history', history)
    if not isinstance(logs, dict) or not logs:
        raise ValueError(f'plot_history: history must be a History or a non-empty dict, got {history!r}')
    names = _quantities(logs, metrics)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError('plot_history needs matplotlib: pip install minidl[plot]') from error

    figure = Figure(figsize=(5, 3 * len(names)))
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(names), 1, squeeze=False)[:, 0]
    for ax, name in zip(axes, names):
        for key, label in ((name, 'train'), ('val_' + name, 'validation')):
            if key in logs:
                values = [float(v) for v in logs[key]]
                ax.plot(range(1, len(values) + 1), values, marker='o', label=label)
        ax.set_title(name)
        ax.set_xlabel('epoch')
        ax.legend()
    figure.tight_layout()
    figure.savefig(os.fspath(path), format='png')


def _quantities(logs, metrics):
    """The base names to draw: 'loss' first, then the metrics in order."""
    recorded = []
    for key in logs:
        name = key[4:] if key.startswith('val_') else key
        if name not in recorded and name not in _HYPERPARAMETERS:
            recorded.append(name)
    if metrics is None:
        wanted = recorded
    else:
        if isinstance(metrics, str):
            metrics = [metrics]
        missing = [m for m in metrics if m not in recorded]
        if missing:
            raise ValueError(f'plot_history: metrics {missing} are not in the history; '
                             f'recorded: {sorted(logs)}')
        wanted = (['loss'] if 'loss' in recorded else []) + [m for m in metrics if m != 'loss']
    if not wanted:
        raise ValueError(f'plot_history: nothing to plot in {sorted(logs)}')
    return sorted(wanted, key=lambda name: name != 'loss')
