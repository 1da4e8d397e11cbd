"""The everyday English of the open model's language model: Debian's fortunes cut into
sentences, none with a held-out word."""

import os

import pytest

from zoo.speech import everyday_texts
from zoo.speech.words import is_held_out, words_digest

installed = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(everyday_texts.DIRECTORY, name))
            for name in everyday_texts.FILES),
    reason='Debian\'s fortunes is not installed (apt-get install fortunes)')


def test_a_text_is_cut_at_sentence_ends_quotes_and_lines_into_lowercase_words():
    text = ('"Don\'t panic!" -- Douglas Adams, 1979.\n'
            'It is 3:45 (or so); the end\n%\nA\nWell... \'quoted\' words?')
    assert everyday_texts.split_sentences(text) == [
        "don't panic", 'douglas adams', 'it is', 'or so', 'the end', 'quoted words']


def test_sentences_are_read_in_file_order_and_a_missing_file_says_what_to_install(tmp_path):
    (tmp_path / 'b').write_text('Second file. Two words\n')
    (tmp_path / 'a').write_text('First file!\n')
    assert everyday_texts.sentences(tmp_path, ('b', 'a')) == [
        'second file', 'two words', 'first file']
    with pytest.raises(RuntimeError, match='apt-get install fortunes'):
        everyday_texts.sentences(tmp_path, ('a', 'missing'))


def test_training_sentences_drop_every_sentence_with_a_held_out_word(tmp_path, monkeypatch):
    assert is_held_out('orchard') and not is_held_out('apple')
    monkeypatch.setattr(everyday_texts, 'FILES', ('one',))
    (tmp_path / 'one').write_text('An apple a day. The old orchard here. Keep the apple.\n')
    expected = words_digest(everyday_texts.sentences(tmp_path))
    assert everyday_texts.training_sentences(tmp_path, expected) == [
        'an apple a day', 'keep the apple']
    with pytest.raises(RuntimeError, match='1:1.99.1-7.3'):
        everyday_texts.training_sentences(tmp_path, '0' * 64)  # another text than expected


@installed
def test_the_installed_fortunes_are_the_text_the_model_was_counted_on():
    found = everyday_texts.sentences()
    assert words_digest(found) == everyday_texts.SENTENCES_SHA256
    kept = everyday_texts.training_sentences()
    assert len(found) == 63413 and len(kept) == 48105
    assert not any(is_held_out(word) for text in kept for word in text.split())
    assert set(''.join(kept)) <= set(" abcdefghijklmnopqrstuvwxyz'")
