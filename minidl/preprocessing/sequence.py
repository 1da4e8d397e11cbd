"""Keras 2's ``preprocessing.sequence``: padding, skip-gram pairs, and windows over time series."""

import numpy as np

from minidl.compute import Generator, default_generator, new_generator
from minidl.data import Sequence
from minidl.utils.sequences import pad_sequences

__all__ = ['TimeseriesGenerator', 'make_sampling_table', 'pad_sequences', 'skipgrams']

# Euler-Mascheroni constant, to the three digits Keras uses.
_EULER_GAMMA = 0.577


def make_sampling_table(size, sampling_factor=1e-5):
    """Word2vec's probability of keeping a word, by frequency rank, for ``skipgrams``.

    A word of frequency f is kept with probability min(1, sqrt(sampling_factor
    / f)); frequencies are estimated from ranks by Zipf's law, f(rank) ~ 1 /
    (rank (ln rank + gamma) + 1/2 - 1/(12 rank)).

    Args:
        size: Number of words (ranks 0 to size - 1; rank 0 is treated as rank 1).
        sampling_factor: The word2vec sampling factor.

    Returns:
        A float array of ``size`` probabilities, entry i for the i-th most common word.
    """
    rank = np.arange(size, dtype=np.float64)
    rank[:1] = 1
    inverse_frequency = rank * (np.log(rank) + _EULER_GAMMA) + 0.5 - 1.0 / (12.0 * rank)
    return np.minimum(1.0, np.sqrt(sampling_factor * inverse_frequency))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1., shuffle=True,
              categorical=False, sampling_table=None, seed=None):
    """Skip-gram pairs of a sentence: (word, neighbour) labelled 1, (word, random word) labelled 0.

    Every nonzero word at position i is paired with every nonzero word at
    positions i - window_size to i + window_size (but i). Then
    ``int(negative_samples * positives)`` negative pairs join each of the
    paired words, in a random order, cycling, with a word drawn uniformly
    from 1 to vocabulary_size - 1.

    Args:
        sequence: Word indices (0 is not a word and is skipped).
        vocabulary_size: Largest word index plus one.
        window_size: Half-width of the window.
        negative_samples: Negative pairs per positive pair (0 for none).
        shuffle: Shuffle the pairs (and their labels alike).
        categorical: Labels as [0, 1] (positive) / [1, 0] (negative) instead of 1 / 0.
        sampling_table: Optional probabilities of keeping each word index
            as a centre word (see :func:`make_sampling_table`).
        seed: Integer seed of all of the randomness (sampling, negatives,
            shuffling); None draws from minidl's default generator.

    Returns:
        ``(couples, labels)``: a list of ``[word, context]`` pairs and a list of labels.
    """
    generator = default_generator() if seed is None else Generator(seed)
    couples = []
    for position, word in enumerate(sequence):
        if not word:
            continue
        if sampling_table is not None and \
                sampling_table[word] < float(generator.uniform((), dtype='float64')):
            continue
        window = range(max(0, position - window_size),
                       min(len(sequence), position + window_size + 1))
        couples += [[word, sequence[other]] for other in window
                    if other != position and sequence[other]]
    def label(value):
        return [1 - value, value] if categorical else value
    labels = [label(1) for _ in couples]
    negatives = int(len(couples) * negative_samples) if negative_samples > 0 else 0
    if negatives:
        words = [couples[i][0] for i in generator.permutation(len(couples))]
        contexts = generator.integers(1, vocabulary_size, shape=negatives)
        couples += [[words[i % len(words)], int(contexts[i])] for i in range(negatives)]
        labels += [label(0) for _ in range(negatives)]
    if shuffle:
        order = generator.permutation(len(couples))
        couples, labels = [couples[i] for i in order], [labels[i] for i in order]
    return couples, labels


class TimeseriesGenerator(Sequence):
    """Batches of windows over a time series, each with the target that follows it.

    Sample j of batch i ends just before step ``row = start_index + length +
    (i * batch_size + j) * stride``: it holds ``data[row - length:row:sampling_rate]``
    and its target is ``targets[row]``.

    Args:
        data: Time steps along axis 0 (an array, or a list numpy can stack).
        targets: One target per time step (same length as ``data``).
        length: Steps of history per sample (before subsampling).
        sampling_rate: Keep every ``sampling_rate``-th step of each window.
        stride: Steps between the ends of consecutive samples.
        start_index: The first ``start_index`` steps are never a sample's target.
        end_index: Last step that may be a target; by default the last one.
        shuffle: Draw each batch's target steps at random (with repetition)
            instead of in order, from a generator seeded from minidl's
            default generator when this object is made.
        reverse: Give each window's steps in reverse order.
        batch_size: Samples per batch (the last batch may be smaller).

    Example::

        series = TimeseriesGenerator(np.arange(50)[:, None], np.arange(50)[:, None],
                                     length=10, sampling_rate=2, batch_size=2)
        x, y = series[0]   # x: [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]] (as columns), y: [[10], [11]]
    """

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0,
                 end_index=None, shuffle=False, reverse=False, batch_size=128):
        if len(data) != len(targets):
            raise ValueError(f'TimeseriesGenerator: data and targets must have the same length, '
                             f'got {len(data)} and {len(targets)}')
        self.data, self.targets = np.asarray(data), np.asarray(targets)
        self.length, self.sampling_rate, self.stride = length, sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        self._generator = new_generator() if shuffle else None
        if self.start_index > self.end_index:
            raise ValueError(f'TimeseriesGenerator: start_index + length = {self.start_index} '
                             f'is past end_index = {self.end_index}, which leaves no step to '
                             f'predict')

    def __len__(self):
        step = self.batch_size * self.stride
        return (self.end_index - self.start_index + step) // step

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError(f'TimeseriesGenerator: batch {index} of {len(self)}')
        index %= len(self)
        if self.shuffle:
            rows = self._generator.integers(self.start_index, self.end_index + 1,
                                                shape=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride,
                                        self.end_index + 1), self.stride)
        samples = np.stack([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        if self.reverse:
            samples = samples[:, ::-1]
        return samples, self.targets[rows]
