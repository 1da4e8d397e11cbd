"""A character n-gram language model for CTC beam search.

The model predicts the next character of a transcript, or its end, from the
``order - 1`` characters before it. Each sentence is padded in front with
``order - 1`` start symbols, so the first characters are predicted from a
context of start symbols (the model learns how sentences begin) and every
prediction has a full-length context.

Two smoothings (Chen & Goodman 1998, "An empirical study of smoothing
techniques for language modeling"):

- ``'kneser-ney'``: interpolated Kneser-Ney with one absolute discount ``D``.
  The highest order uses counts, lower orders use continuation counts (how
  many distinct characters precede an n-gram), and the unigram level is
  interpolated with the uniform distribution, so no character has
  probability 0:
  ``P(w | h) = max(c(h w) - D, 0) / c(h .) + D * N(h .) / c(h .) * P(w | h')``
  where ``N(h .)`` is the number of distinct ``w`` seen after ``h`` and
  ``h'`` is ``h`` without its first character; an unseen ``h`` gives
  ``P(w | h')``.
- ``'add-k'``: ``P(w | h) = (c(h w) + k) / (c(h .) + k * V)`` over the
  ``V`` = characters + end outcomes, with the highest-order counts only.

Everything is derived from the highest-order n-gram counts, which is all the
JSON form stores.
"""

import base64
import binascii
import gzip
import json
import math

import numpy as np

from zoo.speech.alphabet import ENGLISH, Alphabet

SMOOTHINGS = ('kneser-ney', 'add-k')
# v2 holds the counts as base64 arrays, read without a Python object per
# n-gram: the shipped speech 10-gram loads in 0.6 s (3.2 s from v1's list of
# rows, which is still read), a 6-gram of the same texts in 0.08 s (0.6 s).
_FORMAT, _FORMAT_V1 = 'minidl.char_ngram.v2', 'minidl.char_ngram.v1'
_SYMBOL, _COUNT = np.dtype('<u2'), np.dtype('<i8')
# Distributions kept for contexts already asked about. A beam search asks
# about ~90,000 contexts in 500 utterances (~32 MB); starting afresh when
# full keeps a long-lived decoder's memory bounded and changes no value.
CACHE_CONTEXTS = 1 << 16


class CharNgramModel:
    """Character n-gram probabilities over an alphabet's characters and the end.

    Build one with :meth:`train`, :meth:`uniform` or :meth:`from_json`.

    Args:
        counts: Dict from n-gram (a tuple of ``order`` symbol ids) to its
            count, or rows of ``order`` ids then the count (a list or an
            integer array, as :meth:`to_json` stores them). Ids: ``0 .. n-1``
            the alphabet's characters in order, ``n`` the end, ``n + 1`` the
            start.
        order: n, the length of the n-grams.
        smoothing: ``'kneser-ney'`` or ``'add-k'``.
        discount: Kneser-Ney's ``D``, in ``(0, 1]``.
        k: Add-k's pseudo-count, ``> 0``.
        alphabet: The :class:`Alphabet` whose characters are modelled.
    """

    def __init__(self, counts, order, smoothing='kneser-ney', discount=0.75, k=0.1,
                 alphabet=ENGLISH):
        if not isinstance(order, int) or order < 1:
            raise ValueError(f'order must be a positive integer, got {order!r}')
        if smoothing not in SMOOTHINGS:
            raise ValueError(f'smoothing must be one of {SMOOTHINGS}, got {smoothing!r}')
        if not 0 < discount <= 1:
            raise ValueError(f'discount must lie in (0, 1], got {discount!r}')
        if not k > 0:
            raise ValueError(f'k must be positive, got {k!r}')
        self.alphabet = alphabet
        self.order, self.smoothing, self.discount, self.k = order, smoothing, discount, k
        self.size = len(alphabet.characters) + 1           # characters and the end
        self.end, self.start = self.size - 1, self.size
        # An n-gram is one integer, its symbols as digits of base size + 1 (the
        # first most significant), so a table is two sorted arrays, not a dict
        # of tuples (a tenth of the memory), and a context's followers are one
        # contiguous run of codes.
        self._base = self.size + 1
        if self._base ** order >= 2 ** 63:
            raise ValueError(f'order {order} is too high for {self.size + 1} symbols: its '
                             'n-grams do not fit in 64 bits')
        self._ids = {character: i for i, character in enumerate(alphabet.characters)}
        if hasattr(counts, 'items'):
            counts = [tuple(gram) + (count,) for gram, count in counts.items()]
        try:
            rows = np.asarray(counts)
        except ValueError:                                  # rows of different lengths
            rows = np.asarray(counts, dtype=object)
        if rows.size == 0:
            rows = np.zeros((0, order + 1), np.int64)
        elif rows.ndim != 2 or rows.shape[1] != order + 1 or rows.dtype.kind not in 'iu':
            raise ValueError(f'counts must be rows of {order} symbol ids and a count, all '
                             f'integers; got an array of shape {rows.shape} and dtype {rows.dtype}')
        rows = rows.astype(np.int64, copy=False)
        if rows.size and (rows[:, :-1].min() < 0 or rows[:, :-1].max() > self.start):
            raise ValueError(f'n-gram symbols must lie in 0..{self.start}')
        if rows.size and rows[:, -1].min() < 1:
            raise ValueError('n-gram counts must be positive')
        self._powers = self._base ** np.arange(order - 1, -1, -1, dtype=np.int64)
        self._tables = self._count_tables(rows[:, :-1] @ self._powers, rows[:, -1])
        codes = self._tables[order][0]
        if np.any(codes[1:] == codes[:-1]):                 # sorted: a repeat is a neighbour
            raise ValueError('an n-gram is counted twice')
        self._cache = {}

    def _rows(self):
        """The highest-order counts as rows of ``order`` symbol ids then the count, sorted."""
        codes, values = self._tables[self.order]
        grams = codes[:, None] // self._powers % self._base
        return np.concatenate([grams, values[:, None]], axis=1)

    @property
    def counts(self):
        """Dict from each n-gram (a tuple of ``order`` symbol ids) to its count."""
        return {tuple(row[:-1]): row[-1] for row in self._rows().tolist()}

    @classmethod
    def train(cls, texts, order=5, smoothing='kneser-ney', discount=0.75, k=0.1,
              alphabet=ENGLISH):
        """A model counted from ``texts`` (each normalised by the alphabet).

        Args:
            texts: A string or an iterable of strings, one sentence each.
            order: n (5 predicts from the 4 characters before).
            smoothing: ``'kneser-ney'`` (interpolated, Chen & Goodman) or
                ``'add-k'``.
            discount: Kneser-Ney's absolute discount, in ``(0, 1]``.
            k: Add-k's pseudo-count.
            alphabet: The alphabet of the characters.

        Raises:
            ValueError: If a text has a character outside the alphabet.
        """
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(order, int) or order < 1:
            raise ValueError(f'order must be a positive integer, got {order!r}')
        counts = {}
        end, start = len(alphabet.characters), len(alphabet.characters) + 1
        for text in texts:
            # The alphabet's labels are 1-based (0 is the CTC blank); ids here are 0-based.
            ids = [int(label) - 1 for label in alphabet.encode(text)]
            symbols = [start] * (order - 1) + ids + [end]
            for i in range(order - 1, len(symbols)):
                gram = tuple(symbols[i - order + 1:i + 1])
                counts[gram] = counts.get(gram, 0) + 1
        return cls(counts, order, smoothing, discount, k, alphabet)

    @classmethod
    def uniform(cls, alphabet=ENGLISH):
        """A model giving every character and the end the same probability."""
        return cls({}, 1, 'add-k', k=1.0, alphabet=alphabet)

    def _count_tables(self, codes, values):
        """Per n-gram length: (sorted codes, counts); lower lengths continuation counts (KN)."""
        by_code = np.argsort(codes, kind='stable')
        tables = {self.order: (codes[by_code], values[by_code])}
        if self.smoothing == 'kneser-ney':
            # Continuation count of a shorter n-gram: how many distinct symbols
            # precede it among the n-grams one longer (those are distinct codes,
            # and dropping the first symbol is the remainder by base ** length).
            for length in range(self.order - 1, 0, -1):
                longer = tables[length + 1][0]
                tables[length] = np.unique(longer % self._base ** length, return_counts=True)
        return tables

    def _followers(self, context):
        """The symbols seen after ``context`` (ids) and their counts, from its table."""
        codes, values = self._tables[len(context) + 1]
        first = 0
        for symbol in context:
            first = first * self._base + symbol
        first *= self._base
        low, high = np.searchsorted(codes, (first, first + self._base))
        return codes[low:high] - first, values[low:high]

    def _distribution(self, context):
        """Probabilities (V,) of each character then the end after ``context`` (ids)."""
        cached = self._cache.get(context)
        if cached is not None:
            return cached
        if self.smoothing == 'add-k':
            symbols, counts = self._followers(context)
            probs = np.full(self.size, self.k)
            probs[symbols] += counts
            probs /= probs.sum()
        else:
            if context:
                lower = self._distribution(context[1:])
            else:
                lower = np.full(self.size, 1.0 / self.size)
            symbols, counts = self._followers(context)
            if not len(symbols):
                probs = lower
            else:
                total = int(counts.sum())
                probs = self.discount * len(symbols) / total * lower
                probs[symbols] += (counts - self.discount) / total
        if len(self._cache) >= CACHE_CONTEXTS:
            self._cache.clear()
        self._cache[context] = probs
        return probs

    def _context(self, context):
        """Ids of the last ``order - 1`` symbols of start-padded ``context`` (a str)."""
        width = self.order - 1
        if width == 0:
            return ()
        tail = context[-width:]
        try:
            ids = tuple(self._ids[character] for character in tail)
        except KeyError as error:
            raise ValueError(f'context {context!r} has character {error.args[0]!r} outside '
                             f'the alphabet {self.alphabet.characters!r}') from None
        return (self.start,) * (width - len(ids)) + ids

    def log_probs(self, context=''):
        """Natural log-probabilities (V,) of each character (alphabet order) then the end."""
        return np.log(self._distribution(self._context(context)))

    def log_prob(self, char, context=''):
        """Natural log P(``char`` | the sentence so far is ``context``).

        Args:
            char: One character of the alphabet, or None for the end of the
                sentence.
            context: The text since the sentence start (only its last
                ``order - 1`` characters matter).
        """
        if char is None:
            index = self.end
        elif char in self._ids:
            index = self._ids[char]
        else:
            raise ValueError(f'{char!r} is not a character of {self.alphabet!r} (None is '
                             'the end of the sentence)')
        return math.log(self._distribution(self._context(context))[index])

    def score(self, text):
        """Total natural log-probability of the sentence ``text``, its end included."""
        text = self.alphabet.normalize(text)
        total = sum(self.log_prob(character, text[:i]) for i, character in enumerate(text))
        return total + self.log_prob(None, text)

    def perplexity(self, texts):
        """exp(-mean log-probability per predicted symbol: characters and ends)."""
        if isinstance(texts, str):
            texts = [texts]
        texts = [self.alphabet.normalize(text) for text in texts]
        if not texts:
            raise ValueError('perplexity needs at least one text')
        symbols = sum(len(text) + 1 for text in texts)
        return math.exp(-sum(self.score(text) for text in texts) / symbols)

    def to_json(self):
        """The model as a JSON string: its settings and highest-order counts.

        ``grams`` is the base64 of the symbol ids (uint16, little-endian) of
        the ``ngrams`` n-grams in sorted order, position by position: every
        n-gram's first symbol, then every second one, ... (runs that gzip
        packs well: the shipped speech 10-gram's file is 5.4 MB, 6.8 MB as
        v1's rows); ``counts`` is the base64 of their counts (int64,
        little-endian).
        """
        rows = self._rows()
        return json.dumps({
            'format': _FORMAT, 'characters': self.alphabet.characters, 'order': self.order,
            'smoothing': self.smoothing, 'discount': self.discount, 'k': self.k,
            'ngrams': len(rows),
            'grams': base64.b64encode(rows[:, :-1].T.astype(_SYMBOL).tobytes()).decode('ascii'),
            'counts': base64.b64encode(rows[:, -1].astype(_COUNT).tobytes()).decode('ascii')})

    @classmethod
    def from_json(cls, text):
        """The model that :meth:`to_json` wrote (or an earlier version's v1 JSON).

        Raises:
            ValueError: If ``text`` is not such a model, or its arrays do not
                hold ``ngrams`` rows.
        """
        data = json.loads(text)
        if data.get('format') == _FORMAT_V1:
            rows = data['counts']
        elif data.get('format') == _FORMAT:
            count, order = data['ngrams'], data['order']
            try:
                grams = np.frombuffer(base64.b64decode(data['grams'], validate=True), _SYMBOL)
                counts = np.frombuffer(base64.b64decode(data['counts'], validate=True), _COUNT)
            except (binascii.Error, ValueError, TypeError) as error:
                raise ValueError(f'the n-gram arrays are not base64 of whole values: {error}') \
                    from None
            if not (isinstance(order, int) and isinstance(count, int)) or order < 1 \
                    or len(grams) != count * order or len(counts) != count:
                raise ValueError(f'the n-gram arrays hold {len(grams)} symbols and {len(counts)} '
                                 f'counts, not {count} n-grams of order {order}')
            rows = np.concatenate([grams.reshape(order, count).T, counts[:, None]], axis=1)
        else:
            raise ValueError(f'not a character n-gram model: format {data.get("format")!r}, '
                             f'expected {_FORMAT!r}')
        return cls(rows, data['order'], data['smoothing'], data['discount'], data['k'],
                   Alphabet(data['characters']))

    def save(self, path):
        """Write :meth:`to_json` to the file ``path``, gzipped if its name ends in ``.gz``
        (with no time stamp, so that the same counts always give the same bytes)."""
        data = self.to_json().encode('utf-8')
        if str(path).endswith('.gz'):
            data = gzip.compress(data, mtime=0)
        with open(path, 'wb') as file:
            file.write(data)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save` (gunzipped if its name ends in ``.gz``)."""
        opener = gzip.open if str(path).endswith('.gz') else open
        with opener(path, 'rt', encoding='utf-8') as file:
            return cls.from_json(file.read())
