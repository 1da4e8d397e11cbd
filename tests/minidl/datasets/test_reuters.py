"""Reuters loader: Keras's reuters.npz layout written here, the split and index rules by hand."""

import json

import numpy as np
import pytest

from minidl.datasets import reuters

# Each topic is unique, so a newswire can be found whatever the shuffled order.
TEXTS = {0: [1, 2], 1: [3, 9, 9], 2: [5, 1, 4, 1], 3: [7], 4: [2, 2, 2, 2, 2]}


def write_npz(path):
    texts = np.empty(len(TEXTS), dtype=object)
    for index, text in enumerate(TEXTS.values()):
        texts[index] = text
    np.savez(path, x=texts, y=np.array(list(TEXTS)))
    return path


def by_topic(split):
    texts, topics = split
    assert texts.dtype == object and texts.shape == topics.shape
    return {int(topic): text for text, topic in zip(texts, topics)}


def load(tmp_path, **options):
    train, test = reuters.load_data(write_npz(tmp_path / 'reuters.npz'), **options)
    return by_topic(train), by_topic(test)


def test_the_last_fifth_of_the_shuffled_newswires_is_the_test_set(tmp_path):
    train, test = load(tmp_path)
    assert len(train) == 4 and len(test) == 1  # int(5 * 0.8) = 4
    assert {**train, **test} == {0: [1, 4, 5], 1: [1, 6, 12, 12], 2: [1, 8, 4, 7, 4],
                                 3: [1, 10], 4: [1, 5, 5, 5, 5, 5]}


def test_num_words_skip_top_and_oov(tmp_path):
    train, test = load(tmp_path, num_words=8, skip_top=4, test_split=0)
    # Kept: indices 4 to 7; the start mark 1 is below skip_top and becomes 2 as well.
    assert train == {0: [2, 4, 5], 1: [2, 6, 2, 2], 2: [2, 2, 4, 7, 4], 3: [2, 2],
                     4: [2, 5, 5, 5, 5, 5]}
    assert test == {}
    train, _ = load(tmp_path, num_words=8, oov_char=None, test_split=0)
    assert train == {0: [1, 4, 5], 1: [1, 6], 2: [1, 4, 7, 4], 3: [1], 4: [1, 5, 5, 5, 5, 5]}


def test_maxlen_filters_before_the_split(tmp_path):
    # Lengths with the start mark: 3, 4, 5, 2, 6; maxlen=5 keeps topics 0, 1 and 3.
    train, test = load(tmp_path, maxlen=5, test_split=0.34)
    assert len(train) == 1 and len(test) == 2  # int(3 * 0.66) = 1
    assert {**train, **test} == {0: [1, 4, 5], 1: [1, 6, 12, 12], 3: [1, 10]}
    with pytest.raises(ValueError, match='reuters: no text is shorter than maxlen=2'):
        load(tmp_path, maxlen=2)


def test_the_order_depends_on_the_seed_only(tmp_path):
    path = write_npz(tmp_path / 'reuters.npz')
    orders = {seed: [list(reuters.load_data(path, seed=seed, test_split=0)[0][1])
                     for _ in range(2)] for seed in range(6)}
    assert all(first == second for first, second in orders.values())
    assert len({tuple(first) for first, _ in orders.values()}) > 1


def test_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match='reuters: .*absent.npz does not exist; download'):
        reuters.load_data(tmp_path / 'absent.npz')
    with pytest.raises(ValueError, match='test_split must be a fraction from 0 to 1'):
        reuters.load_data(write_npz(tmp_path / 'reuters.npz'), test_split=1.5)
    with pytest.raises(ValueError, match='skip_top must be an integer >= 0, got -1'):
        reuters.load_data(tmp_path / 'reuters.npz', skip_top=-1)
    np.savez(tmp_path / 'imdb_like.npz', x_train=np.zeros(2))
    with pytest.raises(ValueError, match=r"lacks the arrays \['x', 'y'\]"):
        reuters.load_data(tmp_path / 'imdb_like.npz')


def test_word_index(tmp_path):
    path = tmp_path / 'reuters_word_index.json'
    path.write_text(json.dumps({'oil': 5, 'said': 1}))
    assert reuters.get_word_index(path) == {'oil': 5, 'said': 1}
    with pytest.raises(FileNotFoundError, match='download reuters_word_index.json'):
        reuters.get_word_index(tmp_path / 'absent.json')
