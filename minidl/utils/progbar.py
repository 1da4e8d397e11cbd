"""``keras.utils.generic_utils.Progbar``: Keras 2.2.4's progress bar for hand-written loops.

Scripts that train with ``train_on_batch`` (Keras's GAN examples) draw their
own bar with it. The text is Keras 2.2.4's to the character, so that logs
and doctests written against Keras read the same::

     7/32 [======>.......................] - ETA: 3s - loss: 0.6931

and, at the target, ``32/32 [==============================] - 4s 125ms/step``
followed by the averaged values and a newline. ``verbose=2`` prints only that
last line (without the bar); ``verbose=0`` prints nothing.

Every value not in ``stateful_metrics`` is shown as its average over the
steps so far, each update weighted by the steps it covers (Keras's rule);
a stateful value is shown as given.
"""

import sys
import time

import numpy as np


class Progbar:
    """Displays a progress bar (Keras 2.2.4's ``Progbar``).

    Args:
        target: Total number of steps expected, None if unknown.
        width: Width of the bar in characters.
        verbose: 0 (silent), 1 (a bar redrawn as it goes) or 2 (one line at
            the end).
        interval: Least number of seconds between two redraws of the bar
            (the final step is always drawn).
        stateful_metrics: Names of values shown as given rather than
            averaged over time.
    """

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics else set()
        # Redraw in place on a terminal or in Jupyter; elsewhere (a file, a pipe)
        # each draw goes on a new line, as Keras does, since '\r' would pile up.
        stdout = sys.stdout
        self._dynamic_display = (hasattr(stdout, 'isatty') and stdout.isatty()) or \
            'ipykernel' in sys.modules
        self._total_width = 0
        self._seen_so_far = 0
        # name -> [weighted sum, steps] (averaged) or [value, 1] (stateful)
        self._values = {}
        self._start = time.time()
        self._last_update = 0

    def update(self, current, values=None):
        """Record progress up to step ``current`` and redraw.

        Args:
            current: Index of the current step (steps done so far).
            values: List of ``(name, value_for_last_step)`` tuples; a value
                covers the steps since the previous update.
        """
        steps = current - self._seen_so_far
        for name, value in values or []:
            if name in self.stateful_metrics:
                self._values[name] = [value, 1]
            elif name in self._values:
                self._values[name][0] += value * steps
                self._values[name][1] += steps
            else:
                self._values[name] = [value * steps, steps]
        self._seen_so_far = current

        now = time.time()
        if self.verbose == 1:
            unfinished = self.target is not None and current < self.target
            if unfinished and now - self._last_update < self.interval:
                return  # too soon to redraw; the values are kept
            self._draw(current, now)
        elif self.verbose == 2 and (self.target is None or current >= self.target):
            sys.stdout.write(self._elapsed(now) + self._averages(abs_for_small=False) + '\n')
            sys.stdout.flush()
        self._last_update = now

    def add(self, n, values=None):
        """Advance by ``n`` steps (``update(seen + n, values)``)."""
        self.update(self._seen_so_far + n, values)

    # ----- drawing ---------------------------------------------------------------

    def _draw(self, current, now):
        previous_width = self._total_width
        if self._dynamic_display:
            sys.stdout.write('\b' * previous_width + '\r')
        else:
            sys.stdout.write('\n')
        bar = self._bar(current)
        per_step = (now - self._start) / current if current else 0
        if self.target is not None and current < self.target:
            info = ' - ETA: ' + _eta(per_step * (self.target - current))
        else:
            info = self._elapsed(now) + _per_step(per_step)
        info += self._averages(abs_for_small=True)
        self._total_width = len(bar) + len(info)
        # Blank out what is left of a longer previous line.
        info += ' ' * max(previous_width - self._total_width, 0)
        if self.target is not None and current >= self.target:
            info += '\n'
        sys.stdout.write(bar + info)
        sys.stdout.flush()

    def _bar(self, current):
        if self.target is None:
            return '%7d/Unknown' % current
        digits = int(np.floor(np.log10(self.target))) + 1
        filled = int(self.width * float(current) / self.target)
        head = ''
        if filled > 0:
            head = '=' * (filled - 1) + ('>' if current < self.target else '=')
        return '%*d/%d [%s%s]' % (digits, current, self.target, head,
                                  '.' * (self.width - filled))

    def _elapsed(self, now):
        return ' - %.0fs' % (now - self._start)

    def _averages(self, abs_for_small):
        # Keras 2.2.4 picks the exponent format for |average| <= 1e-3 on the bar,
        # but for average <= 1e-3 (negative values included) in verbose=2's line.
        text = ''
        for name, (total, count) in self._values.items():
            average = np.mean(total / max(1, count))
            small = abs(average) <= 1e-3 if abs_for_small else average <= 1e-3
            text += ' - %s: %s' % (name, '%.4e' % average if small else '%.4f' % average)
        return text


def _eta(seconds):
    if seconds > 3600:
        return '%d:%02d:%02d' % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return '%d:%02d' % (seconds // 60, seconds % 60)
    return '%ds' % seconds


def _per_step(seconds):
    if seconds >= 1:
        return ' %.0fs/step' % seconds
    if seconds >= 1e-3:
        return ' %.0fms/step' % (seconds * 1e3)
    return ' %.0fus/step' % (seconds * 1e6)
