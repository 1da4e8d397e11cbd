"""More everyday English for the open recipe: WordNet's example sentences, read from its
data files, none with a held-out word."""

import os

import pytest

from zoo.speech import wordnet_examples
from zoo.speech.words import is_held_out, words_digest

installed = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(wordnet_examples.DIRECTORY, name))
            for name in wordnet_examples.FILES),
    reason='Debian\'s wordnet-base is not installed (apt-get install wordnet-base)')

# Lines as WordNet 3.0's data files have them: a licence indented by two spaces
# (whose quotes are not examples), then one synset a line, its gloss after '|'.
LICENCE = '  1 This software and database is being provided "as is" to you.\n'
NOUN = ('00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which is perceived '
        '"an apple a day"; "the orchard is old"  \n')
VERB = ('00001740 29 v 04 breathe 0 021 * 00005041 v 0000 | draw air; "Breathe deeply! '
        'Then rest"  \n')


def _write(directory, files):
    for name in wordnet_examples.FILES:
        (directory / name).write_text(files.get(name, LICENCE))


def test_the_quoted_examples_of_each_gloss_are_cut_into_sentences_in_file_order(tmp_path):
    _write(tmp_path, {'data.noun': LICENCE + NOUN, 'data.verb': LICENCE + VERB})
    # Sentences of two words or more (as the fortunes are cut): "breathe deeply" and
    # "then rest"; the licence's quote and the gloss outside quotes are no example.
    assert wordnet_examples.sentences(tmp_path) == [
        'an apple a day', 'the orchard is old', 'breathe deeply', 'then rest']


def test_a_missing_file_says_what_to_install(tmp_path):
    _write(tmp_path, {})
    os.remove(tmp_path / 'data.adv')
    with pytest.raises(RuntimeError, match='apt-get install wordnet-base'):
        wordnet_examples.sentences(tmp_path)


def test_training_sentences_drop_every_sentence_with_a_held_out_word(tmp_path):
    assert is_held_out('orchard') and not is_held_out('apple')
    _write(tmp_path, {'data.noun': LICENCE + NOUN})
    expected = words_digest(wordnet_examples.sentences(tmp_path))
    assert wordnet_examples.training_sentences(tmp_path, expected) == ['an apple a day']
    with pytest.raises(RuntimeError, match='1:3.0-37'):
        wordnet_examples.training_sentences(tmp_path, '0' * 64)  # another text than expected


@installed
def test_the_installed_wordnet_is_the_text_the_recipe_was_chosen_on():
    found = wordnet_examples.sentences()
    assert words_digest(found) == wordnet_examples.SENTENCES_SHA256
    kept = wordnet_examples.training_sentences()
    assert len(found) == 48886 and len(kept) == 36709
    assert not any(is_held_out(word) for text in kept for word in text.split())
    assert set(''.join(kept)) <= set(" abcdefghijklmnopqrstuvwxyz'")
