"""IMDB movie reviews from a local file: 25000 training and 25000 test reviews, positive or not.

``load_data(path)`` reads Keras's ``imdb.npz``, whose arrays ``x_train``
and ``x_test`` hold each review as a list of word ranks and ``y_train``,
``y_test`` the labels (1 positive, 0 negative); ``get_word_index(path)``
reads ``imdb_word_index.json``, which maps each word to its rank. The
reviews are read without unpickling (:mod:`minidl.datasets.npz_arrays`) and
turned into model inputs by Keras's rules (:mod:`minidl.datasets.word_sequences`).
Nothing is downloaded.
"""

from minidl.compute import Generator
from minidl.datasets import word_sequences
from minidl.datasets.files import locate
from minidl.datasets.npz_arrays import read_npz

_KEYS = ('x_train', 'y_train', 'x_test', 'y_test')
_ORIGIN = 'https://storage.googleapis.com/tensorflow/tf-keras-datasets/'
_WHERE = f'download imdb.npz from {_ORIGIN}imdb.npz (where Keras gets it) and pass its path'
_WHERE_INDEX = (f'download imdb_word_index.json from {_ORIGIN}imdb_word_index.json and pass '
                f'its path')


def load_data(path='imdb.npz', num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3):
    """The IMDB reviews as word-index lists, and their labels.

    Args:
        path: Keras's ``imdb.npz``. A relative path that does not exist is
            also looked up under ``~/.keras/datasets``.
        num_words: Keep the words of index below ``num_words`` (the most
            frequent ones); None keeps all.
        skip_top: Treat the indices below ``skip_top`` (the most frequent
            words) as out of vocabulary.
        maxlen: Keep only the reviews shorter than ``maxlen`` indices
            (the start mark counted), in each split; None keeps all.
        seed: Seed of the shuffling of each split.
        start_char: Index that starts every review; None for no mark.
        oov_char: Index that replaces the words cut by ``num_words`` or
            ``skip_top``; None removes them.
        index_from: Added to every word rank of the file.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: x as 1-D object arrays of
        lists of ints, y as the file's integer labels, each split shuffled by
        a Generator seeded with ``seed`` (the order differs from Keras's).

    Raises:
        FileNotFoundError: If ``path`` does not exist; the message says where
            to get the file.
        ValueError: If the file is not Keras's imdb.npz, an option is out of
            range, or ``maxlen`` leaves a split empty.
    """
    word_sequences.check_options('imdb', num_words, skip_top, maxlen)
    location = locate(path)
    if location is None:
        raise FileNotFoundError(f'imdb: {path} does not exist; {_WHERE}')
    arrays = read_npz(location, _KEYS, 'imdb')
    generator = Generator(seed)
    splits = []
    for part in ('train', 'test'):
        reviews, labels = arrays[f'x_{part}'], arrays[f'y_{part}']
        word_sequences.check_pairs('imdb', f'x_{part} and y_{part}', reviews, labels)
        reviews, labels = word_sequences.encode(f'imdb ({part})', reviews, labels, generator,
                                                start_char, index_from, maxlen, num_words,
                                                skip_top, oov_char)
        splits.append((word_sequences.as_object_array(reviews), labels))
    return tuple(splits)


def get_word_index(path='imdb_word_index.json'):
    """The ``{word: rank}`` dict of Keras's ``imdb_word_index.json``.

    A word of rank r appears in ``load_data``'s reviews as ``r + index_from``.

    Raises:
        FileNotFoundError: If ``path`` does not exist (also looked up under
            ``~/.keras/datasets``).
        ValueError: If the file is not a JSON object of words and ranks.
    """
    return word_sequences.read_word_index(path, 'imdb', _WHERE_INDEX)
