"""IMDB loader: Keras's imdb.npz layout written here, Keras's index rules checked by hand."""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

from minidl.datasets import imdb


def ragged(texts):
    array = np.empty(len(texts), dtype=object)
    for index, text in enumerate(texts):
        array[index] = text
    return array


# Each label is unique, so a review can be found whatever the shuffled order.
TRAIN = {0: [1, 2, 3], 1: [4, 1, 7, 2], 2: [6]}
TEST = {10: [2, 5], 11: [8, 1, 1, 1, 1]}


def write_npz(path, train=TRAIN, test=TEST):
    np.savez(path, x_train=ragged(list(train.values())), y_train=np.array(list(train)),
             x_test=ragged(list(test.values())), y_test=np.array(list(test)))
    return path


def by_label(split):
    texts, labels = split
    assert texts.dtype == object and texts.shape == labels.shape
    assert all(isinstance(text, list) for text in texts)
    return {int(label): text for text, label in zip(texts, labels)}


def load(tmp_path, **options):
    train, test = imdb.load_data(write_npz(tmp_path / 'imdb.npz'), **options)
    return by_label(train), by_label(test)


def test_defaults_add_the_start_mark_and_shift_ranks_by_three(tmp_path):
    train, test = load(tmp_path)
    assert train == {0: [1, 4, 5, 6], 1: [1, 7, 4, 10, 5], 2: [1, 9]}
    assert test == {10: [1, 5, 8], 11: [1, 11, 4, 4, 4, 4]}


def test_num_words_turns_indices_from_num_words_up_into_the_oov_mark(tmp_path):
    train, test = load(tmp_path, num_words=7)
    assert train == {0: [1, 4, 5, 6], 1: [1, 2, 4, 2, 5], 2: [1, 2]}
    assert test == {10: [1, 5, 2], 11: [1, 2, 4, 4, 4, 4]}


def test_skip_top_also_applies_to_the_start_mark_as_in_keras(tmp_path):
    # Indices below 5 (the start mark 1 and the shifted rank-1 word 4) become 2.
    train, test = load(tmp_path, num_words=7, skip_top=5)
    assert train == {0: [2, 2, 5, 6], 1: [2, 2, 2, 2, 5], 2: [2, 2]}
    assert test == {10: [2, 5, 2], 11: [2, 2, 2, 2, 2, 2]}


def test_without_oov_char_cut_words_are_removed(tmp_path):
    train, test = load(tmp_path, num_words=7, oov_char=None)
    assert train == {0: [1, 4, 5, 6], 1: [1, 4, 5], 2: [1]}
    assert test == {10: [1, 5], 11: [1, 4, 4, 4, 4]}


def test_start_char_none_and_index_from(tmp_path):
    train, test = load(tmp_path, start_char=None, index_from=0)
    assert train == TRAIN and test == TEST
    train, _ = load(tmp_path, start_char=None, index_from=10)
    assert train == {0: [11, 12, 13], 1: [14, 11, 17, 12], 2: [16]}


def test_maxlen_keeps_reviews_shorter_than_maxlen_in_each_split(tmp_path):
    # Lengths with the start mark: train 4, 5, 2; test 3, 6. Length 5 is dropped at maxlen=5.
    train, test = load(tmp_path, maxlen=5)
    assert train == {0: [1, 4, 5, 6], 2: [1, 9]}
    assert test == {10: [1, 5, 8]}
    with pytest.raises(ValueError, match=r'imdb \(train\): no text is shorter than maxlen=2'):
        load(tmp_path, maxlen=2)


def test_shuffling_is_deterministic_per_seed_and_keeps_labels_with_reviews(tmp_path):
    reviews = {label: [label + 1] * (label % 4 + 1) for label in range(20)}
    path = write_npz(tmp_path / 'many.npz', train=reviews, test=reviews)
    (x_a, y_a), (x_test, y_test) = imdb.load_data(path, start_char=None, index_from=0)
    (x_b, y_b), _ = imdb.load_data(path, start_char=None, index_from=0)
    (_, y_other), _ = imdb.load_data(path, seed=114)
    assert by_label((x_a, y_a)) == reviews and by_label((x_test, y_test)) == reviews
    assert list(y_a) == list(y_b) and [list(x) for x in x_a] == [list(x) for x in x_b]
    assert sorted(y_a) == list(range(20)) and list(y_a) != list(range(20))
    assert list(y_other) != list(y_a)
    assert list(y_test) != list(y_a)  # the test split is shuffled by the next draws


def test_a_python2_style_pickle_inside_the_npz_is_read(tmp_path):
    path = tmp_path / 'imdb.npz'
    with zipfile.ZipFile(path, 'w') as archive:
        for key, array in [('x_train', ragged([[5, 6]])), ('y_train', np.array([1])),
                           ('x_test', ragged([[7]])), ('y_test', np.array([0]))]:
            member = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                member, np.lib.format.header_data_from_array_1_0(array))
            if array.dtype == object:
                member.write(pickle.dumps(array, protocol=2))
            else:
                member.write(array.tobytes())
            archive.writestr(f'{key}.npy', member.getvalue())
    (x_train, y_train), (x_test, y_test) = imdb.load_data(path)
    assert list(x_train[0]) == [1, 8, 9] and list(y_train) == [1]
    assert list(x_test[0]) == [1, 10] and list(y_test) == [0]


class RunsCode:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        import os
        return os.mkdir, (self.path,)


def test_an_npz_whose_objects_would_run_code_is_refused(tmp_path):
    target = tmp_path / 'created'
    path = tmp_path / 'imdb.npz'
    np.savez(path, x_train=ragged([RunsCode(str(target))]), y_train=np.array([0]),
             x_test=ragged([[1]]), y_test=np.array([0]))
    with pytest.raises(ValueError, match=r'imdb: cannot read .*x_train .*refusing to load'):
        imdb.load_data(path)
    assert not target.exists()


def test_clear_errors_for_missing_or_wrong_files_and_options(tmp_path):
    with pytest.raises(FileNotFoundError, match='imdb: .*nothing.npz does not exist; download'):
        imdb.load_data(tmp_path / 'nothing.npz')
    (tmp_path / 'text.npz').write_text('not a zip')
    with pytest.raises(ValueError, match='is not an .npz file'):
        imdb.load_data(tmp_path / 'text.npz')
    np.savez(tmp_path / 'partial.npz', x_train=ragged([[1]]), y_train=np.array([0]))
    with pytest.raises(ValueError, match=r"lacks the arrays \['x_test', 'y_test'\]"):
        imdb.load_data(tmp_path / 'partial.npz')
    np.savez(tmp_path / 'mismatch.npz', x_train=ragged([[1], [2]]), y_train=np.array([0]),
             x_test=ragged([[1]]), y_test=np.array([0]))
    with pytest.raises(ValueError, match='x_train and y_train must hold n texts and n labels'):
        imdb.load_data(tmp_path / 'mismatch.npz')
    with pytest.raises(ValueError, match='imdb: num_words must be an integer >= 1 or None'):
        imdb.load_data(write_npz(tmp_path / 'imdb.npz'), num_words=0)


def test_the_keras_cache_is_the_default_place(tmp_path, monkeypatch):
    cache = tmp_path / '.keras' / 'datasets'
    cache.mkdir(parents=True)
    write_npz(cache / 'imdb.npz')
    (cache / 'imdb_word_index.json').write_text(json.dumps({'the': 1, 'and': 2}))
    monkeypatch.setenv('HOME', str(tmp_path))
    (_, y_train), _ = imdb.load_data()
    assert sorted(y_train) == [0, 1, 2]
    assert imdb.get_word_index() == {'the': 1, 'and': 2}


def test_word_index_must_map_words_to_integers(tmp_path):
    path = tmp_path / 'index.json'
    path.write_text(json.dumps({'film': 19, 'bad': 75}))
    assert imdb.get_word_index(path) == {'film': 19, 'bad': 75}
    path.write_text(json.dumps(['film', 'bad']))
    with pytest.raises(ValueError, match='mapping each word to its integer rank'):
        imdb.get_word_index(path)
    path.write_text('{"film": ')
    with pytest.raises(ValueError, match='is not a JSON file'):
        imdb.get_word_index(path)
    with pytest.raises(FileNotFoundError, match='download imdb_word_index.json'):
        imdb.get_word_index(tmp_path / 'absent.json')
