"""The text of Keras 2's progress bar, as pure functions of the progress so far.

With ``verbose=1`` on a terminal the line is redrawn as batches finish::

     7/32 [=====>........................] - ETA: 0s - loss: 0.6931 - accuracy: 0.5000

and ends as ``32/32 [==============================] - 1s 20ms/step - loss: ...``.
With ``verbose=2`` (or when the output is not a terminal) each epoch
prints one line: ``32/32 - 1s - loss: 0.3012 - ... - 1s/epoch - 20ms/step``.
"""

import numpy as np

#: Characters between the brackets of the bar.
BAR_WIDTH = 30


def format_value(value):
    """A logged value as Keras prints it: ' 0.3012', or ' 1.0000e-04' when tiny."""
    try:
        mean = float(np.mean(value))
    except (TypeError, ValueError):
        return f' {value}'
    return f' {mean:.4f}' if abs(mean) > 1e-3 else f' {mean:.4e}'


def format_rate(seconds, unit):
    """' 20ms/step': a duration per unit in s, ms or us."""
    if seconds >= 1 or seconds == 0:
        return f' {seconds:.0f}s/{unit}'
    if seconds >= 1e-3:
        return f' {seconds * 1e3:.0f}ms/{unit}'
    return f' {seconds * 1e6:.0f}us/{unit}'


def format_eta(seconds):
    """'7s', '2:05' or '1:02:05'."""
    if seconds > 3600:
        return '%d:%02d:%02d' % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return '%d:%02d' % (seconds // 60, seconds % 60)
    return '%ds' % seconds


def _count(current, target):
    return f'{current:{len(str(target))}d}/{target}'


def _bar(current, target):
    filled = int(BAR_WIDTH * current / target)
    head = ''
    if filled > 0:
        head = '=' * (filled - 1) + ('>' if current < target else '=')
    return f'[{head}{"." * (BAR_WIDTH - filled)}]'


def _values(values):
    return ''.join(f' - {name}:{format_value(value)}' for name, value in values)


def live_line(current, target, elapsed, values, finished, unit='step'):
    """One frame of the redrawn bar (``target`` None: the length is unknown).

    Args:
        current: Steps done.
        target: Steps in the epoch, or None.
        elapsed: Seconds since the bar started.
        values: ``(name, value)`` pairs to show.
        finished: Whether this is the final frame (time per step, no ETA).
        unit: What a step is called.
    """
    per_step = elapsed / current if current else 0.0
    if target is None:
        line = '%7d/Unknown' % current
    else:
        line = f'{_count(current, target)} {_bar(current, target)}'
    if finished or target is None:
        line += f' - {elapsed:.0f}s{format_rate(per_step, unit)}'
    else:
        line += f' - ETA: {format_eta(per_step * (target - current))}'
    return line + _values(values)


def summary_line(current, elapsed, values, unit='step'):
    """The single line of an epoch printed without a live bar."""
    per_step = elapsed / current if current else 0.0
    return (f'{_count(current, current)} - {elapsed:.0f}s{_values(values)} -'
            f'{format_rate(elapsed, "epoch")} -{format_rate(per_step, unit)}')
