"""CSVLogger: one CSV row per epoch, written as training goes."""

import csv
import os

from minidl.callbacks.base import Callback, is_chief


class CSVLogger(Callback):
    """Writes each epoch's logs to a CSV file: ``epoch,<log names, sorted>``.

    The columns are those of the first epoch; a later epoch without one of
    them (e.g. no validation that epoch) writes 'NA' there. Every row is
    flushed to disk when written, so a crash loses no finished epoch. Only
    the chief process writes. Lines end with '\\r\\n' (the csv module's
    Excel dialect), as in Keras.

    Args:
        filename: Path of the CSV file (str or path-like).
        separator: The one character between fields.
        append: Add to an existing file (its header is written only if the
            file is empty) instead of replacing it.

    Raises:
        ValueError: If ``separator`` is not a single character.
    """

    def __init__(self, filename, separator=',', append=False):
        super().__init__()
        if not (isinstance(separator, str) and len(separator) == 1):
            raise ValueError(f'CSVLogger: separator must be a single character, '
                             f'got {separator!r}')
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self.csv_file = None
        self._writer = None
        self._write_header = False

    def on_train_begin(self, logs=None):
        self.keys = None
        if not is_chief(self.model):
            return
        self._write_header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename, newline='') as existing:
                self._write_header = not existing.readline()
        self.csv_file = open(self.filename, 'a' if self.append else 'w', newline='')
        self._writer = csv.writer(self.csv_file, delimiter=self.sep)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self.csv_file is None:
            return
        if self._write_header:
            self._writer.writerow(['epoch'] + self.keys)
            self._write_header = False
        self._writer.writerow([epoch] + [logs.get(key, 'NA') for key in self.keys])
        self.csv_file.flush()
        os.fsync(self.csv_file.fileno())

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
            self.csv_file = None
            self._writer = None
