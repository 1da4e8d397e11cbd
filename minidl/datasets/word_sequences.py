"""Keras's rules for data sets of texts stored as word indices (imdb, reuters).

In the files, each text is a list of word ranks: 1 is the most frequent
word of the training texts, 2 the next, and so on. ``load_data`` turns
them into model inputs in three steps, as Keras does:

1. every rank is raised by ``index_from`` (leaving 0 for padding, 1 for the
   start mark and 2 for "out of vocabulary") and, unless ``start_char`` is
   None, the text starts with ``start_char``;
2. with ``maxlen``, only texts shorter than ``maxlen`` after step 1 are kept
   (as in Keras, one of exactly ``maxlen`` indices is dropped too);
3. an index outside ``[skip_top, num_words)`` (the start mark included)
   becomes ``oov_char``, or is removed if ``oov_char`` is None.

One difference from Keras: with ``num_words=None`` every word is kept,
whereas Keras caps at the largest index seen and so turns that one word
into ``oov_char``.
"""

import json
import numbers

import numpy as np

from minidl.datasets.files import locate


def check_options(dataset, num_words, skip_top, maxlen):
    """Raise ValueError naming the data set if an option of ``load_data`` is out of range."""
    _check_integer(dataset, 'num_words', num_words, smallest=1, optional=True)
    _check_integer(dataset, 'maxlen', maxlen, smallest=1, optional=True)
    _check_integer(dataset, 'skip_top', skip_top, smallest=0, optional=False)


def _check_integer(dataset, name, value, smallest, optional):
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < smallest:
        raise ValueError(f'{dataset}: {name} must be an integer >= {smallest}'
                         f'{" or None" if optional else ""}, got {value!r}')


def encode(dataset, texts, labels, generator, start_char, index_from, maxlen, num_words,
           skip_top, oov_char):
    """Shuffle the texts with ``generator`` and apply steps 1 to 3 to them.

    Returns:
        ``(texts, labels)``: the texts as lists of ints, the labels in step.

    Raises:
        ValueError: If ``maxlen`` keeps no text.
    """
    order = generator.permutation(len(texts))
    texts, labels = mark_and_shift(texts[order], start_char, index_from), labels[order]
    if maxlen is not None:
        texts, labels = drop_long(texts, labels, maxlen)
        if not texts:
            raise ValueError(f'{dataset}: no text is shorter than maxlen={maxlen}; '
                             f'increase maxlen')
    return limit_vocabulary(texts, num_words, skip_top, oov_char), labels


def mark_and_shift(texts, start_char, index_from):
    """Step 1: each text as a list of ints, raised by ``index_from``, after ``start_char``."""
    start = [] if start_char is None else [start_char]
    return [start + [int(word) + index_from for word in text] for text in texts]


def drop_long(texts, labels, maxlen):
    """Step 2: the texts shorter than ``maxlen``, and their labels."""
    kept = [index for index, text in enumerate(texts) if len(text) < maxlen]
    return [texts[index] for index in kept], labels[np.asarray(kept, dtype=np.int64)]


def limit_vocabulary(texts, num_words, skip_top, oov_char):
    """Step 3: indices outside ``[skip_top, num_words)`` replaced by ``oov_char`` or removed."""
    limit = float('inf') if num_words is None else num_words

    def kept(word):
        return skip_top <= word < limit
    if oov_char is None:
        return [[word for word in text if kept(word)] for text in texts]
    return [[word if kept(word) else oov_char for word in text] for text in texts]


def as_object_array(texts):
    """The texts as a 1-D array of lists, whatever their lengths (as Keras returns them)."""
    array = np.empty(len(texts), dtype=object)
    for index, text in enumerate(texts):  # element by element: each list stays one element
        array[index] = text
    return array


def check_pairs(dataset, names, texts, labels):
    """Raise ValueError unless ``texts`` and ``labels`` (the arrays ``names``) match in length."""
    if texts.ndim < 1 or labels.ndim != 1 or len(texts) != len(labels):
        raise ValueError(f'{dataset}: the arrays {names} must hold n texts and n labels, shapes '
                         f'(n,) and (n,); got {texts.shape} and {labels.shape}')


def read_word_index(path, dataset, where):
    """The ``{word: rank}`` dict of the JSON file ``path`` (also looked up in Keras's cache).

    Raises:
        FileNotFoundError: If the file is missing; ``where`` says where to get it.
        ValueError: If it is not a JSON object mapping words to integers.
    """
    location = locate(path)
    if location is None:
        raise FileNotFoundError(f'{dataset}: {path} does not exist; {where}')
    try:
        with open(location, encoding='utf-8') as file:
            index = json.load(file)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f'{dataset}: {location} is not a JSON file ({error})') from None
    if not isinstance(index, dict) or not all(
            isinstance(rank, int) and not isinstance(rank, bool) for rank in index.values()):
        raise ValueError(f'{dataset}: {location} must hold a JSON object mapping each word to '
                         f'its integer rank')
    return index
