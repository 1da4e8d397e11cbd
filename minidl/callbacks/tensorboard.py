"""TensorBoard: the logs of training as event files that TensorBoard reads."""

import os

import numpy as np

from minidl.callbacks import event_file
from minidl.callbacks.base import Callback, is_chief
from minidl.compute import to_numpy

# Batch bookkeeping that Keras puts in batch logs; not curves.
_NOT_SCALARS = ('batch', 'size')


class TensorBoard(Callback):
    """Writes the losses and metrics, and optionally weight histograms, for TensorBoard.

    Each ``fit`` call writes a new ``events.out.tfevents.<time>.<host>`` file
    in ``log_dir``; ``tensorboard --logdir <log_dir>`` shows it. Neither
    TensorFlow nor TensorBoard is needed to write it
    (:mod:`minidl.callbacks.event_file`). Every number in the epoch logs
    (``loss``, ``acc``, ``val_*``, ``lr`` ...) becomes a scalar curve under
    its own name, as in Keras 2. Only the chief process writes.

    Args:
        log_dir: Directory of the event files (made if missing).
        histogram_freq: Every this many epochs (0-based epochs divisible by
            it), a histogram of each weight, tagged with the weight's name
            ('dense/kernel_0'); 0 for none. Keras 2 also draws histograms of
            each layer's outputs on the validation data; minidl draws the
            weights only, so no validation data is needed.
        batch_size: Accepted for Keras 2's signature; it sized the batches
            of Keras's output histograms, which minidl does not draw.
        write_graph: Accepted and ignored: TensorBoard's graph view shows
            TensorFlow graphs, which minidl models are not
            (``minidl.utils.plot_model`` draws the model).
        write_grads: Gradient histograms (with ``histogram_freq``); not
            implemented.
        write_images: Weights as images (with ``histogram_freq``); not
            implemented.
        embeddings_freq: Embedding projector data; not implemented (the
            other ``embeddings_*`` arguments are accepted while it is 0).
        update_freq: 'epoch' writes the epoch logs at step = epoch; 'batch'
            also writes the running logs after every training batch, and an
            integer ``n`` after every ``n`` batches, with the step counting
            the batches trained since the callback was made (epoch logs are
            then written at that step too). Keras 2 counted samples for an
            integer; minidl's batch logs do not carry batch sizes, so it
            counts batches.

    Raises:
        ValueError: If ``histogram_freq`` or ``update_freq`` is invalid.
        NotImplementedError: For gradient or image histograms, or embeddings.
    """

    def __init__(self, log_dir='./logs', histogram_freq=0, batch_size=32, write_graph=True,
                 write_grads=False, write_images=False, embeddings_freq=0,
                 embeddings_layer_names=None, embeddings_metadata=None, embeddings_data=None,
                 update_freq='epoch'):
        super().__init__()
        if not isinstance(histogram_freq, (int, np.integer)) or histogram_freq < 0:
            raise ValueError(f'TensorBoard: histogram_freq must be a non-negative integer, '
                             f'got {histogram_freq!r}')
        # As in Keras 2, gradient and image summaries exist only alongside histograms.
        for option, wanted in (('write_grads', write_grads), ('write_images', write_images)):
            if wanted and histogram_freq:
                raise NotImplementedError(f'TensorBoard: {option}=True is not implemented; '
                                          f'only weight histograms are written')
        if embeddings_freq:
            raise NotImplementedError('TensorBoard: embeddings (embeddings_freq > 0) are not '
                                      'implemented')
        if update_freq == 'batch':
            update_freq = 1
        elif update_freq != 'epoch' and (not isinstance(update_freq, (int, np.integer))
                                         or isinstance(update_freq, bool) or update_freq < 1):
            raise ValueError(f"TensorBoard: update_freq must be 'epoch', 'batch' or a positive "
                             f"number of batches, got {update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = int(histogram_freq)
        self.batch_size = batch_size
        self.write_graph = write_graph
        self.update_freq = update_freq
        self.batches_seen = 0
        self._batches_at_last_write = 0
        self.writer = None

    def on_train_begin(self, logs=None):
        if is_chief(self.model):
            self.writer = event_file.EventFileWriter(self.log_dir)

    def on_train_batch_end(self, batch, logs=None):
        if self.update_freq == 'epoch':
            return
        self.batches_seen += 1
        if self.batches_seen - self._batches_at_last_write >= self.update_freq:
            self._write_scalars(logs, self.batches_seen)
            self._batches_at_last_write = self.batches_seen

    def on_epoch_end(self, epoch, logs=None):
        step = epoch if self.update_freq == 'epoch' else self.batches_seen
        self._write_scalars(logs, step)
        if self.histogram_freq and epoch % self.histogram_freq == 0 and self.writer is not None:
            weights = {id(weight): weight for weight in self.model.weights}.values()
            for weight in weights:
                tag = weight.name.replace(':', '_')
                summary = event_file.histogram_summary(tag, to_numpy(weight.data))
                self.writer.write(event_file.event(epoch, summary=summary))
            self.writer.flush()

    def on_train_end(self, logs=None):
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def _write_scalars(self, logs, step):
        if self.writer is None:
            return
        scalars = [(name, float(value)) for name, value in (logs or {}).items()
                   if name not in _NOT_SCALARS and _is_number(value)]
        if scalars:
            self.writer.write(event_file.event(step, summary=event_file.scalar_summary(scalars)))
            self.writer.flush()


def _is_number(value):
    return np.ndim(value) == 0 and np.issubdtype(np.asarray(value).dtype, np.number)
