"""Reuters newswires from a local file: 11228 texts in 46 topics.

``load_data(path)`` reads Keras's ``reuters.npz``, whose array ``x`` holds
each newswire as a list of word ranks and ``y`` its topic (0 to 45), and
splits them into training and test sets; ``get_word_index(path)`` reads
``reuters_word_index.json``. The texts are read without unpickling
(:mod:`minidl.datasets.npz_arrays`) and turned into model inputs by Keras's
rules (:mod:`minidl.datasets.word_sequences`). Nothing is downloaded.
"""

import numbers

from minidl.compute import Generator
from minidl.datasets import word_sequences
from minidl.datasets.files import locate
from minidl.datasets.npz_arrays import read_npz

_ORIGIN = 'https://storage.googleapis.com/tensorflow/tf-keras-datasets/'
_WHERE = f'download reuters.npz from {_ORIGIN}reuters.npz (where Keras gets it) and pass its path'
_WHERE_INDEX = (f'download reuters_word_index.json from {_ORIGIN}reuters_word_index.json and '
                f'pass its path')


def load_data(path='reuters.npz', num_words=None, skip_top=0, maxlen=None, test_split=0.2,
              seed=113, start_char=1, oov_char=2, index_from=3):
    """The Reuters newswires as word-index lists, and their topics.

    Args:
        path: Keras's ``reuters.npz``. A relative path that does not exist
            is also looked up under ``~/.keras/datasets``.
        num_words: Keep the words of index below ``num_words`` (the most
            frequent ones); None keeps all.
        skip_top: Treat the indices below ``skip_top`` (the most frequent
            words) as out of vocabulary.
        maxlen: Keep only the newswires shorter than ``maxlen`` indices (the
            start mark counted); None keeps all.
        test_split: Fraction of the (shuffled, filtered) newswires put in the
            test set, the last ones.
        seed: Seed of the shuffling.
        start_char: Index that starts every newswire; None for no mark.
        oov_char: Index that replaces the words cut by ``num_words`` or
            ``skip_top``; None removes them.
        index_from: Added to every word rank of the file.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: x as 1-D object arrays of
        lists of ints, y as the file's integer topics. The shuffling uses a
        Generator seeded with ``seed`` (the order differs from Keras's).

    Raises:
        FileNotFoundError: If ``path`` does not exist; the message says where
            to get the file.
        ValueError: If the file is not Keras's reuters.npz, an option is out
            of range, or ``maxlen`` keeps no newswire.
    """
    word_sequences.check_options('reuters', num_words, skip_top, maxlen)
    if not isinstance(test_split, numbers.Real) or not 0 <= test_split <= 1:
        raise ValueError(f'reuters: test_split must be a fraction from 0 to 1, got '
                         f'{test_split!r}')
    location = locate(path)
    if location is None:
        raise FileNotFoundError(f'reuters: {path} does not exist; {_WHERE}')
    arrays = read_npz(location, ('x', 'y'), 'reuters')
    word_sequences.check_pairs('reuters', 'x and y', arrays['x'], arrays['y'])
    texts, topics = word_sequences.encode('reuters', arrays['x'], arrays['y'], Generator(seed),
                                          start_char, index_from, maxlen, num_words, skip_top,
                                          oov_char)
    split = int(len(texts) * (1 - test_split))
    return ((word_sequences.as_object_array(texts[:split]), topics[:split]),
            (word_sequences.as_object_array(texts[split:]), topics[split:]))


def get_word_index(path='reuters_word_index.json'):
    """The ``{word: rank}`` dict of Keras's ``reuters_word_index.json``.

    A word of rank r appears in ``load_data``'s newswires as ``r + index_from``.

    Raises:
        FileNotFoundError: If ``path`` does not exist (also looked up under
            ``~/.keras/datasets``).
        ValueError: If the file is not a JSON object of words and ranks.
    """
    return word_sequences.read_word_index(path, 'reuters', _WHERE_INDEX)
