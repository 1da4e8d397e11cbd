"""ProgbarLogger: Keras 2's progress output for fit, evaluate and predict, drawn with tqdm."""

import sys
import time

from tqdm import tqdm

from minidl.callbacks.base import Callback, is_chief
from minidl.callbacks.progress_line import live_line, summary_line


class _LiveBar(tqdm):
    """A tqdm bar whose line is Keras's (see :func:`live_line`)."""

    # No background monitor thread: the bar is drawn only when a batch ends,
    # so the output depends on the training alone.
    monitor_interval = 0

    def __init__(self, total, file, mininterval):
        self.values = []
        self.finished = False
        super().__init__(total=total, file=file, mininterval=mininterval, miniters=1,
                         position=0, leave=True)

    @property
    def format_dict(self):
        return dict(super().format_dict, values=self.values, finished=self.finished)

    @staticmethod
    def format_meter(n, total, elapsed, values=(), finished=False, **unused):
        return live_line(n, total, elapsed, values, finished)

    def display(self, msg=None, pos=None):
        # Keras draws the bar from the first finished step on, not at step 0.
        if self.n == 0 and not self.finished:
            return False
        # Always on the current line: tqdm's stacking of nested bars by
        # position would hide the bar where the terminal's size is unknown.
        self.sp(self.__str__() if msg is None else msg)
        return True


class ProgbarLogger(Callback):
    """Prints progress bars and the epoch's values to ``sys.stdout``, as Keras does.

    ``fit`` adds one when ``verbose != 0``; with ``verbose=1`` the bar is
    redrawn after each batch on a terminal (or in Jupyter), while
    ``verbose=2``, or output to a file or pipe, gives one line per epoch.
    'Epoch i/n' heads each epoch when there is more than one; every line is
    flushed as printed. The
    validation inside ``fit`` prints nothing of its own; ``evaluate`` and
    ``predict`` print their own bar. Only the chief process prints.

    Args:
        count_mode: 'steps' or 'samples'. The loops report steps only, so
            both count steps.
        stateful_metrics: Accepted for Keras compatibility. Every value in
            the logs is already the running mean of the epoch, so all are
            shown as they are (Keras's stateful metrics).

    Raises:
        ValueError: For another ``count_mode``.
    """

    #: Seconds between two redraws of a live bar (Keras's Progbar interval).
    refresh_interval = 0.05

    def __init__(self, count_mode='samples', stateful_metrics=None):
        super().__init__()
        if count_mode not in ('samples', 'steps'):
            raise ValueError(f"ProgbarLogger: count_mode must be 'samples' or 'steps', "
                             f"got {count_mode!r}")
        self.stateful_metrics = set(stateful_metrics or ())
        self.verbose = 1
        self.epochs = 1
        self.target = None
        self.seen = 0
        self._in_fit = False
        self._bar = None
        self._start = None

    def set_params(self, params):
        super().set_params(params)
        self.verbose = params.get('verbose', 1)
        self.epochs = params.get('epochs', 1)
        self.target = params.get('steps')

    def _prints(self):
        return bool(self.verbose) and is_chief(self.model)

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        if self._prints() and self.epochs > 1:
            print('Epoch %d/%d' % (epoch + 1, self.epochs), flush=True)
        self._begin()

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch + 1, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs)

    def on_test_begin(self, logs=None):
        if not self._in_fit:
            self._begin()

    def on_test_batch_end(self, batch, logs=None):
        if not self._in_fit:
            self._update(batch + 1, logs)

    def on_test_end(self, logs=None):
        if not self._in_fit:
            self._finish(logs)

    def on_predict_begin(self, logs=None):
        self._begin()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch + 1, None)

    def on_predict_end(self, logs=None):
        self._finish(None)

    def _begin(self):
        self.seen = 0
        self._start = time.monotonic()
        stdout = sys.stdout
        live = self.verbose == 1 and (stdout.isatty() or 'ipykernel' in sys.modules)
        if self._prints() and live:
            self._bar = _LiveBar(self.target, stdout, self.refresh_interval)

    def _update(self, seen, logs):
        self.seen = seen
        if self._bar is not None:
            self._bar.values = list((logs or {}).items())
            self._bar.update(seen - self._bar.n)

    def _finish(self, logs):
        values = list((logs or {}).items())
        target = self.seen if self.target is None else self.target
        if self._bar is not None:
            self._bar.values = values
            self._bar.finished = True
            self._bar.total = self._bar.n = target
            self._bar.close()
            self._bar = None
        elif self._prints():
            # Flushed, as Keras's Progbar does: into a pipe (mpirun's, a log) too, each line
            # shows when its epoch ends rather than when a buffer fills.
            print(summary_line(target, time.monotonic() - self._start, values), flush=True)
