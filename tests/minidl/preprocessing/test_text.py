"""preprocessing.text: word splitting, hashing and the Tokenizer, against hand-worked values."""

import hashlib
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from minidl.preprocessing import text
from minidl.preprocessing.text import Tokenizer

TEXTS = ['The cat sat on the mat.', 'The dog sat.', 'A cat, a dog!']
# Counts: the 3, cat 2, sat 2, on 1, mat 1, dog 2, a 2 (in order of first appearance);
# by count, ties in that order: the, cat, sat, dog, a, on, mat.
WORD_INDEX = {'the': 1, 'cat': 2, 'sat': 3, 'dog': 4, 'a': 5, 'on': 6, 'mat': 7}
WORD_DOCS = {'the': 2, 'cat': 2, 'sat': 2, 'on': 1, 'mat': 1, 'dog': 2, 'a': 1}


def fitted(**settings):
    tokenizer = Tokenizer(**settings)
    tokenizer.fit_on_texts(TEXTS)
    return tokenizer


def test_text_to_word_sequence_drops_punctuation_but_not_apostrophes():
    words = text.text_to_word_sequence("Hello, World! It's\there.\nNew")
    assert words == ['hello', 'world', "it's", 'here', 'new']
    assert text.text_to_word_sequence('A-B c', filters='', lower=False, split='-') == ['A', 'B c']


def test_hashing_trick_is_md5_modulo_n_minus_one_plus_one_by_default():
    expected = [int(hashlib.md5(word.encode()).hexdigest(), 16) % 9 + 1
                for word in ('the', 'cat', 'the')]
    assert text.hashing_trick('The cat, the', 10) == expected
    assert text.hashing_trick('The cat, the', 10, hash_function='md5') == expected
    assert text.one_hot('The cat, the', 10) == expected
    assert text.hashing_trick('a bb ccc', 10, hash_function=len) == [2, 3, 4]
    assert text.one_hot('a bb ccc', 3, hash_function=len) == [2, 1, 2]
    with pytest.raises(ValueError, match='at least 2'):
        text.hashing_trick('word', 1)


def test_one_hot_gives_the_same_indices_in_another_process():
    """Python's hash() is salted per process; the default hash must not be."""
    # Load text.py alone (it needs only numpy), which is quicker than importing minidl.
    script = ('import importlib.util as u; '
              f's = u.spec_from_file_location("text", {text.__file__!r}); '
              'm = u.module_from_spec(s); s.loader.exec_module(m); '
              'print(m.one_hot("some words to hash here", 1000))')
    runs = [subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                           check=True, env={**os.environ, 'PYTHONHASHSEED': seed}).stdout
            for seed in ('1', '2')]
    assert runs[0] == runs[1] == f'{text.one_hot("some words to hash here", 1000)}\n'


def test_word_index_orders_by_count_then_first_appearance():
    tokenizer = fitted()
    assert tokenizer.word_index == WORD_INDEX
    assert tokenizer.index_word == {index: word for word, index in WORD_INDEX.items()}
    assert tokenizer.word_counts == {'the': 3, 'cat': 2, 'sat': 2, 'on': 1, 'mat': 1, 'dog': 2,
                                     'a': 2}
    assert list(tokenizer.word_counts) == ['the', 'cat', 'sat', 'on', 'mat', 'dog', 'a']
    assert dict(tokenizer.word_docs) == WORD_DOCS
    assert dict(tokenizer.index_docs) == {WORD_INDEX[w]: n for w, n in WORD_DOCS.items()}
    assert tokenizer.document_count == 3


def test_texts_to_sequences_drops_unknown_words_and_indices_from_num_words_up():
    assert fitted().texts_to_sequences(['the dog sat on a hat']) == [[1, 4, 3, 6, 5]]
    # num_words=4 keeps indices 1 to 3: the, cat, sat.
    assert fitted(num_words=4).texts_to_sequences(['the dog sat on a hat']) == [[1, 3]]
    generated = fitted().texts_to_sequences_generator(['cat', 'mat'])
    assert next(generated) == [2] and next(generated) == [7]


def test_the_oov_token_takes_index_one_and_replaces_dropped_words():
    tokenizer = fitted(oov_token='<oov>', num_words=4)
    assert tokenizer.word_index == {'<oov>': 1, **{w: i + 1 for w, i in WORD_INDEX.items()}}
    # Kept: <oov> 1, the 2, cat 3; sat is 4, dog 5, ... and hat is unknown.
    assert tokenizer.texts_to_sequences(['the dog sat on a hat']) == [[2, 1, 1, 1, 1, 1]]
    assert tokenizer.sequences_to_texts([[2, 3, 5, 42]]) == ['the cat <oov> <oov>']


def test_sequences_to_texts_without_an_oov_token_drops_unknown_indices():
    assert fitted().sequences_to_texts([[1, 4, 3, 99], []]) == ['the dog sat', '']
    assert fitted(num_words=3).sequences_to_texts([[1, 2, 3]]) == ['the cat']


def test_char_level_and_pre_split_texts():
    characters = Tokenizer(char_level=True)
    characters.fit_on_texts(['abCa'])
    assert characters.word_index == {'a': 1, 'b': 2, 'c': 3}
    assert characters.texts_to_sequences(['cab']) == [[3, 1, 2]]
    tokens = Tokenizer()
    tokens.fit_on_texts([['Hello', 'World'], ['hello']])
    assert tokens.word_index == {'hello': 1, 'world': 2}
    assert tokens.texts_to_sequences([['WORLD', 'hello', 'x']]) == [[2, 1]]


def test_matrices_in_every_mode():
    tokenizer = fitted()
    texts = ['the cat the', 'dog', '']
    count = tokenizer.texts_to_matrix(texts, mode='count')
    assert count.shape == (3, 8)  # len(word_index) + 1 columns
    expected = np.zeros((3, 8))
    expected[0, 1], expected[0, 2], expected[1, 4] = 2, 1, 1
    assert np.array_equal(count, expected)
    assert np.array_equal(tokenizer.texts_to_matrix(texts), (expected > 0).astype(float))
    freq = tokenizer.texts_to_matrix(texts, mode='freq')
    assert freq[0, 1] == pytest.approx(2 / 3) and freq[0, 2] == pytest.approx(1 / 3)
    assert freq[1, 4] == 1 and freq[2].sum() == 0
    assert fitted(num_words=3).texts_to_matrix(texts, mode='count').tolist() == [
        [0, 2, 1], [0, 0, 0], [0, 0, 0]]


def test_tfidf_uses_log_tf_and_smoothed_idf():
    tokenizer = fitted()
    tfidf = tokenizer.texts_to_matrix(['the cat the', 'dog mat'], mode='tfidf')
    documents = 3

    def weight(count, containing):
        return (1 + math.log(count)) * math.log(1 + documents / (1 + containing))
    expected = np.zeros((2, 8))
    expected[0, 1] = weight(2, 2)  # 'the': twice here, in 2 of the 3 documents
    expected[0, 2] = weight(1, 2)  # 'cat'
    expected[1, 4] = weight(1, 2)  # 'dog'
    expected[1, 7] = weight(1, 1)  # 'mat'
    np.testing.assert_allclose(tfidf, expected)


def test_fit_on_sequences_counts_documents_per_index():
    tokenizer = Tokenizer(num_words=5)
    tokenizer.fit_on_sequences([[1, 2, 2], [2, 3]])
    assert tokenizer.document_count == 2 and dict(tokenizer.index_docs) == {1: 1, 2: 2, 3: 1}
    tfidf = tokenizer.sequences_to_matrix([[2, 2, 4]], mode='tfidf')
    np.testing.assert_allclose(tfidf[0], [0, 0, (1 + math.log(2)) * math.log(1 + 2 / 3), 0,
                                          math.log(3)])


def test_matrix_errors_name_the_problem():
    with pytest.raises(ValueError, match='num_words'):
        Tokenizer().sequences_to_matrix([[1]])
    with pytest.raises(ValueError, match='tfidf'):
        Tokenizer(num_words=3).sequences_to_matrix([[1]], mode='tfidf')
    with pytest.raises(ValueError, match="got 'counts'"):
        fitted().texts_to_matrix(['cat'], mode='counts')


def test_json_round_trip_in_keras_format():
    tokenizer = fitted(oov_token='<oov>', num_words=6)
    stored = tokenizer.to_json()
    outer = json.loads(stored)
    assert outer['class_name'] == 'Tokenizer'
    assert json.loads(outer['config']['word_index']) == tokenizer.word_index
    restored = text.tokenizer_from_json(stored)
    assert restored.word_index == tokenizer.word_index
    assert restored.index_word == tokenizer.index_word and 2 in restored.index_word
    assert restored.num_words == 6 and restored.oov_token == '<oov>'
    assert restored.document_count == 3
    texts = ['the cat sat on a hat', 'dog']
    assert restored.texts_to_sequences(texts) == tokenizer.texts_to_sequences(texts)
    np.testing.assert_array_equal(restored.texts_to_matrix(texts, mode='tfidf'),
                                  tokenizer.texts_to_matrix(texts, mode='tfidf'))
    restored.fit_on_texts(['new words'])
    assert restored.word_docs['new'] == 1 and restored.document_count == 4
