"""Padded batches of utterances: what a speech model's ``fit`` and ``predict`` read.

A batch of utterances of different lengths is one array of features
``(batch, frames, bins)``, each utterance followed by frames of zeros up to
the longest, and one array of labels ``(batch, characters)``, each transcript
followed by zeros. The Deep Speech models find each utterance's length from
its non-zero frames (features are normalised per utterance, so a real frame
is never all zeros) and the CTC loss (``loss='ctc'``) finds each transcript's
length from its first zero, so padding needs no side arrays.

Batching utterances of similar length together wastes little work on
padding: :class:`SpeechBatches` sorts the utterances by length and cuts the
sorted list into batches; ``fit_generator(..., shuffle=True)`` then visits
those batches in an order drawn from the model's seeded generator.
"""

import math

import numpy as np

from minidl.data import Sequence

from zoo.speech.alphabet import ENGLISH


def pad_features(features):
    """Utterances ``[(frames_i, bins)]`` as one float32 array ``(n, max frames, bins)``,
    zero-padded.

    Raises:
        ValueError: If the utterances differ in bins, or one has no frame.
    """
    if not len(features):
        raise ValueError('pad_features needs at least one utterance')
    bins = {np.shape(utterance)[1:] for utterance in features}
    if len(bins) != 1 or len(next(iter(bins))) != 1:
        raise ValueError(f'utterances must be 2-D (frames, bins) with one number of bins, got '
                         f'shapes {sorted(bins)}')
    lengths = [len(utterance) for utterance in features]
    if min(lengths) == 0:
        raise ValueError('pad_features: an utterance has no frame')
    batch = np.zeros((len(features), max(lengths)) + next(iter(bins)), np.float32)
    for row, utterance in zip(batch, features):
        row[:len(utterance)] = utterance
    return batch


def pad_labels(transcripts, alphabet=ENGLISH):
    """Transcripts as int64 labels ``(n, longest)``, each followed by zeros (the blank)."""
    encoded = [alphabet.encode(text) for text in transcripts]
    labels = np.zeros((len(encoded), max(map(len, encoded), default=0)), np.int64)
    for row, text in zip(labels, encoded):
        row[:len(text)] = text
    return labels


class SpeechBatches(Sequence):
    """Utterances cut into padded batches of similar length, for ``fit_generator``.

    Args:
        features: List of float arrays (frames, bins), one per utterance.
        transcripts: Their texts, or None for batches of features only
            (as :func:`~zoo.speech.transcribe.output_probabilities` reads them).
        batch_size: Utterances per batch (the last batch may be smaller).
        alphabet: Encodes the transcripts.
    """

    def __init__(self, features, transcripts=None, batch_size=32, alphabet=ENGLISH):
        if transcripts is not None and len(transcripts) != len(features):
            raise ValueError(f'{len(features)} utterances but {len(transcripts)} transcripts')
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f'batch_size must be a positive integer, got {batch_size!r}')
        self.features, self.transcripts = features, transcripts
        self.batch_size, self.alphabet = batch_size, alphabet
        # Stable: utterances of one length keep their order, so the batches are the same anywhere.
        self.order = np.argsort([len(utterance) for utterance in features], kind='stable')

    def __len__(self):
        return math.ceil(len(self.features) / self.batch_size)

    def indices(self, index):
        """The utterances in batch ``index``."""
        if not 0 <= index < len(self):
            raise IndexError(f'batch {index} of {len(self)}')
        return self.order[index * self.batch_size:(index + 1) * self.batch_size]

    def __getitem__(self, index):
        chosen = self.indices(index)
        x = pad_features([self.features[i] for i in chosen])
        if self.transcripts is None:
            return x
        return x, pad_labels([self.transcripts[i] for i in chosen], self.alphabet)
