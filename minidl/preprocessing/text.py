"""Keras 2's ``preprocessing.text``: word splitting, hashing to indices, and the Tokenizer."""

import hashlib
import json
from collections import defaultdict

import numpy as np

__all__ = ['Tokenizer', 'hashing_trick', 'one_hot', 'text_to_word_sequence', 'tokenizer_from_json']

DEFAULT_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'
MATRIX_MODES = ('binary', 'count', 'tfidf', 'freq')


def text_to_word_sequence(text, filters=DEFAULT_FILTERS, lower=True, split=' '):
    """Split a text into words.

    Args:
        text: A string.
        filters: Characters to remove (each becomes a separator); by default
            punctuation except the apostrophe, tabs and newlines.
        lower: Lowercase the text first.
        split: The separator between words.

    Returns:
        The list of non-empty words.
    """
    if lower:
        text = text.lower()
    text = text.translate(str.maketrans({character: split for character in filters}))
    return [word for word in text.split(split) if word]


def md5_hash(word):
    """A word's MD5 digest as an integer: the same in every process, unlike ``hash``."""
    return int(hashlib.md5(word.encode('utf-8')).hexdigest(), 16)


def hashing_trick(text, n, hash_function=None, filters=DEFAULT_FILTERS, lower=True, split=' '):
    """Map each word of a text to ``hash(word) % (n - 1) + 1``, an index in [1, n - 1].

    Different words may share an index. Keras 2 hashes with Python's
    ``hash`` by default, which is salted per process, so its indices change
    between runs; minidl hashes with MD5 unless told otherwise.

    Args:
        text: A string.
        n: Size of the index space (indices run from 1 to n - 1; 0 is never used).
        hash_function: None or 'md5' for MD5, or a function from a word to an int.
        filters: Characters to remove (see :func:`text_to_word_sequence`).
        lower: Lowercase the text first.
        split: The separator between words.

    Returns:
        A list of ints, one per word.
    """
    if n < 2:
        raise ValueError(f'hashing_trick: n must be at least 2 (indices run from 1 to n - 1), '
                         f'got {n}')
    if hash_function is None or hash_function == 'md5':
        hash_function = md5_hash
    words = text_to_word_sequence(text, filters=filters, lower=lower, split=split)
    return [hash_function(word) % (n - 1) + 1 for word in words]


def one_hot(text, n, filters=DEFAULT_FILTERS, lower=True, split=' ', hash_function=None):
    """Word indices in [1, n - 1] by hashing: :func:`hashing_trick` under Keras's older name.

    Deterministic (MD5) by default, where Keras 2 uses the per-process salted
    ``hash``; pass ``hash_function`` to choose another hash.
    """
    return hashing_trick(text, n, hash_function=hash_function, filters=filters, lower=lower,
                         split=split)


class Tokenizer:
    """Index the words of a corpus by frequency, and turn texts into index sequences or matrices.

    ``fit_on_texts`` counts words; the most frequent word gets index 1 (or 2
    after an ``oov_token``, which always takes index 1), ties keeping the
    order in which the words first appeared; 0 is never a word's index.
    Conversions keep only indices below ``num_words``, i.e. the
    ``num_words - 1`` most frequent words.

    Args:
        num_words: Keep only indices below this (None: all words).
        filters: Characters to remove from texts (see :func:`text_to_word_sequence`).
        lower: Lowercase the texts.
        split: The separator between words.
        char_level: Treat every character as a token.
        oov_token: A token that stands for every word outside the kept
            vocabulary in ``texts_to_sequences`` (None: such words are dropped).
        document_count: Number of documents already counted.

    Attributes:
        word_counts: Dict from word to its number of occurrences, in order of first appearance.
        word_docs: Dict from word to the number of documents containing it.
        word_index: Dict from word to index.
        index_word: Dict from index to word.
        index_docs: Dict from index to the number of documents containing it.
        document_count: Number of documents fitted.
    """

    def __init__(self, num_words=None, filters=DEFAULT_FILTERS, lower=True, split=' ',
                 char_level=False, oov_token=None, document_count=0):
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token = char_level, oov_token
        self.document_count = document_count
        self.word_counts = {}
        self.word_docs = defaultdict(int)
        self.index_docs = defaultdict(int)
        self.word_index, self.index_word = {}, {}

    def _tokens(self, text):
        """A text's tokens: a list of strings is taken as tokens already."""
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [token.lower() for token in text] if isinstance(text, list) \
                    else text.lower()
            return list(text)
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        """Count the words of ``texts`` (strings, or lists of tokens) and rebuild the index."""
        for text in texts:
            self.document_count += 1
            tokens = self._tokens(text)
            for token in tokens:
                self.word_counts[token] = self.word_counts.get(token, 0) + 1
            for token in dict.fromkeys(tokens):  # each distinct token once, in order
                self.word_docs[token] += 1
        # sorted() is stable: words of equal count keep their first-appearance order.
        by_count = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)
        vocabulary = [] if self.oov_token is None else [self.oov_token]
        vocabulary += [word for word, _ in by_count if word != self.oov_token]
        self.word_index = {word: index for index, word in enumerate(vocabulary, start=1)}
        self.index_word = {index: word for word, index in self.word_index.items()}
        for word, count in self.word_docs.items():
            self.index_docs[self.word_index[word]] = count

    def fit_on_sequences(self, sequences):
        """Count documents per index from sequences of indices (for ``sequences_to_matrix``)."""
        self.document_count += len(sequences)
        for sequence in sequences:
            for index in dict.fromkeys(sequence):
                self.index_docs[index] += 1

    def _kept(self, index):
        return not self.num_words or index < self.num_words

    def texts_to_sequences(self, texts):
        """Each text as a list of word indices (see :meth:`texts_to_sequences_generator`)."""
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        """Yield each text as a list of word indices.

        Words outside the index, or with an index of ``num_words`` or more,
        become the ``oov_token``'s index, or are dropped when there is none.
        """
        oov_index = self.word_index.get(self.oov_token)
        for text in texts:
            sequence = []
            for token in self._tokens(text):
                index = self.word_index.get(token)
                if index is not None and self._kept(index):
                    sequence.append(index)
                elif oov_index is not None:
                    sequence.append(oov_index)
            yield sequence

    def sequences_to_texts(self, sequences):
        """Each sequence of indices as a string of words joined by spaces."""
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        """Yield each sequence of indices as a string of words joined by spaces.

        Indices that are unknown or not below ``num_words`` become the
        ``oov_token``, or are dropped when there is none.
        """
        for sequence in sequences:
            words = []
            for index in sequence:
                word = self.index_word.get(index)
                if word is not None and self._kept(index):
                    words.append(word)
                elif self.oov_token is not None:
                    words.append(self.oov_token)
            yield ' '.join(words)

    def texts_to_matrix(self, texts, mode='binary'):
        """A (texts, num_words) matrix of the texts (see :meth:`sequences_to_matrix`)."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode='binary'):
        """A (sequences, num_words) float matrix: row i describes sequence i.

        Entry (i, j), for an index j occurring c > 0 times in sequence i, is
        1 ('binary'), c ('count'), c / len(sequence) ('freq') or
        (1 + ln c) * ln(1 + documents / (1 + documents containing j))
        ('tfidf'); indices of ``num_words`` or more are left out. Without
        ``num_words`` the matrix has ``len(word_index) + 1`` columns.

        Raises:
            ValueError: For an unknown mode, or when the tokenizer has neither
                ``num_words`` nor a fitted index (or, for 'tfidf', no documents).
        """
        if mode not in MATRIX_MODES:
            raise ValueError(f'sequences_to_matrix: mode must be one of {MATRIX_MODES}, '
                             f'got {mode!r}')
        if self.num_words:
            columns = self.num_words
        elif self.word_index:
            columns = len(self.word_index) + 1
        else:
            raise ValueError('sequences_to_matrix: give the Tokenizer num_words, or fit it on '
                             'texts first')
        if mode == 'tfidf' and not self.document_count:
            raise ValueError("sequences_to_matrix: mode 'tfidf' needs a Tokenizer fitted on "
                             "some documents")
        matrix = np.zeros((len(sequences), columns))
        for row, sequence in enumerate(sequences):
            counts = {}
            for index in sequence:
                if index < columns:
                    counts[index] = counts.get(index, 0) + 1
            for index, count in counts.items():
                if mode == 'binary':
                    matrix[row, index] = 1
                elif mode == 'count':
                    matrix[row, index] = count
                elif mode == 'freq':
                    matrix[row, index] = count / len(sequence)
                else:
                    documents = self.index_docs.get(index, 0)
                    matrix[row, index] = (1 + np.log(count)) * np.log(
                        1 + self.document_count / (1 + documents))
        return matrix

    def get_config(self):
        """The tokenizer's settings and counts (counts as JSON strings, as Keras stores them)."""
        return {
            'num_words': self.num_words, 'filters': self.filters, 'lower': self.lower,
            'split': self.split, 'char_level': self.char_level, 'oov_token': self.oov_token,
            'document_count': self.document_count,
            'word_counts': json.dumps(self.word_counts),
            'word_docs': json.dumps(self.word_docs),
            'index_docs': json.dumps(self.index_docs),
            'index_word': json.dumps(self.index_word),
            'word_index': json.dumps(self.word_index),
        }

    def to_json(self, **kwargs):
        """The tokenizer as a JSON string (Keras's format); ``kwargs`` go to ``json.dumps``.

        :func:`tokenizer_from_json` reads it back.
        """
        return json.dumps({'class_name': type(self).__name__, 'config': self.get_config()},
                          **kwargs)


def tokenizer_from_json(json_string):
    """A Tokenizer from the JSON that :meth:`Tokenizer.to_json` (or Keras) wrote."""
    config = dict(json.loads(json_string)['config'])
    counts = {name: json.loads(config.pop(name))
              for name in ('word_counts', 'word_docs', 'index_docs', 'index_word', 'word_index')}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = counts['word_counts']
    tokenizer.word_docs = defaultdict(int, counts['word_docs'])
    # JSON object keys are strings; the indices are ints.
    tokenizer.index_docs = defaultdict(int, {int(k): v for k, v in counts['index_docs'].items()})
    tokenizer.index_word = {int(k): v for k, v in counts['index_word'].items()}
    tokenizer.word_index = counts['word_index']
    return tokenizer
