"""Everyday English for the language model: the sentences of Debian's fortunes.

The open corpus's training texts draw their words one by one, so a language
model counted on them alone knows how words are spelled, not which words
follow which: it scored "eye love you" as high as "i love you". Debian's
``fortunes`` package (version 1:1.99.1-7.3, ``/usr/share/games/fortunes``:
quotations, sayings and jokes in plain English) supplies sentences of
everyday English (``apt-get install fortunes``). Each file is cut at
sentence ends, quotes, brackets and line breaks; a piece keeps its words of
the letters a-z and the apostrophe, lowercased (``"Don't!"`` -> ``don't``),
and is a sentence when it has two words or more. :data:`SENTENCES_SHA256`
pins the result, so that the language model is only counted on the text it
was chosen with.

The test split's words must stay unseen: :func:`training_sentences` drops
every sentence that holds a held-out word (:func:`zoo.speech.words.is_held_out`,
the rule of the word alone): 48,105 of the 63,413 sentences stay (300,421
words).
"""

import os
import re

from zoo.speech.words import is_held_out, words_digest

DIRECTORY = '/usr/share/games/fortunes'
# The package's English files, in order; 'ascii-art' (pictures) is left out.
FILES = (
    'art', 'computers', 'cookie', 'debian', 'definitions', 'disclaimer', 'drugs', 'education',
    'ethnic', 'food', 'fortunes', 'goedel', 'humorists', 'kids', 'knghtbrd', 'law', 'linux',
    'linuxcookie', 'literature', 'love', 'magic', 'medicine', 'men-women', 'miscellaneous',
    'news', 'paradoxum', 'people', 'perl', 'pets', 'platitudes', 'politics', 'pratchett',
    'riddles', 'science', 'songs-poems', 'sports', 'startrek', 'tao', 'translate-me', 'wisdom',
    'work', 'zippy')
SENTENCES_SHA256 = 'e047885c2421ece1abb3842b9a199073ebfefb8c9f3272e8986f6d30662a8281'
_BREAK = re.compile(r'[.!?;:\n%"()]+')
_NOT_LETTERS = re.compile(r"[^a-z' ]+")


def split_sentences(text):
    """The sentences of ``text``: lowercase words of a-z and ``'``, two or more each."""
    sentences = []
    for piece in _BREAK.split(text.lower()):
        words = [word.strip("'") for word in _NOT_LETTERS.sub(' ', piece).split()]
        words = [word for word in words if word]
        if len(words) >= 2:
            sentences.append(' '.join(words))
    return sentences


def sentences(directory=DIRECTORY, files=None):
    """Every sentence of the fortune ``files`` (default :data:`FILES`) in ``directory``,
    in order.

    Raises:
        RuntimeError: If a file is missing (says what to install).
    """
    found = []
    for name in FILES if files is None else files:
        path = os.path.join(directory, name)
        try:
            with open(path, encoding='utf-8', errors='replace') as file:
                found.extend(split_sentences(file.read()))
        except FileNotFoundError:
            raise RuntimeError(f'no fortune file at {path}: the language model counts '
                               f'everyday English from Debian\'s fortunes, '
                               f'`apt-get install fortunes`') from None
    return found


def training_sentences(directory=DIRECTORY, expected=None):
    """The fortunes' sentences that hold no held-out word, in order.

    Args:
        directory: Where the fortune files lie.
        expected: SHA-256 of all their sentences; default :data:`SENTENCES_SHA256`.

    Raises:
        RuntimeError: If the files are missing, or are not the text the language
            model was chosen with (another version of the package).
    """
    return pinned_training_sentences(sentences(directory), expected or SENTENCES_SHA256,
                                     'fortunes 1:1.99.1-7.3')


def pinned_training_sentences(found, expected, source):
    """``found`` less every sentence that holds a held-out word, once they are the text
    the recipe was chosen on.

    Args:
        found: Sentences, in order.
        expected: The SHA-256 of all of them (:func:`zoo.speech.words.words_digest`).
        source: The Debian package and version they were read from, for the error.

    Raises:
        RuntimeError: If their SHA-256 is not ``expected`` (another version of the package).
    """
    digest = words_digest(found)
    if digest != expected:
        raise RuntimeError(f'the installed sentences have SHA-256 {digest} ({len(found)} '
                           f'sentences), not {expected}: the recipe was chosen on {source}')
    return [text for text in found if not any(is_held_out(word) for word in text.split())]
