"""More everyday English: the example sentences of WordNet 3.0.

WordNet's glosses show each sense of a word in use, in quotes ("every
morning they exchanged polite hellos", "lie down on the bed until you feel
better"): short sentences of plain English, as many as the fortunes
(:mod:`zoo.speech.everyday_texts`) hold, on other subjects. Debian's
``wordnet-base`` package (version 1:3.0-37, ``apt-get install
wordnet-base``) ships them in ``/usr/share/wordnet/data.{noun,verb,adj,adv}``:
a synset per line, its gloss after ``|``. Each quoted example is cut into
sentences as the fortunes are (:func:`zoo.speech.everyday_texts.split_sentences`);
:data:`SENTENCES_SHA256` pins the result.

As with the fortunes, :func:`training_sentences` keeps only the sentences
without a held-out word, so the test split's words stay unseen.
"""

import os
import re

from zoo.speech.everyday_texts import pinned_training_sentences, split_sentences

DIRECTORY = '/usr/share/wordnet'
FILES = ('data.noun', 'data.verb', 'data.adj', 'data.adv')
SENTENCES_SHA256 = '339499ce0eebf32050f7240f434f8332929b988b2cbc6aa5ed57bb8e94651498'
_QUOTED = re.compile(r'"([^"]+)"')


def sentences(directory=DIRECTORY):
    """Every sentence of WordNet's quoted examples, in the order of :data:`FILES`.

    Raises:
        RuntimeError: If a data file is missing (says what to install).
    """
    found = []
    for name in FILES:
        path = os.path.join(directory, name)
        try:
            with open(path, encoding='latin-1') as file:
                for line in file:
                    # Synset lines start with their offset; the licence above them with spaces.
                    if line[:1].isdigit() and '|' in line:
                        for example in _QUOTED.findall(line.split('|', 1)[1]):
                            found.extend(split_sentences(example))
        except FileNotFoundError:
            raise RuntimeError(f'no WordNet data file at {path}: the open recipe reads '
                               f'example sentences from Debian\'s wordnet-base, '
                               f'`apt-get install wordnet-base`') from None
    return found


def training_sentences(directory=DIRECTORY, expected=None):
    """WordNet's example sentences that hold no held-out word, in order.

    Args:
        directory: Where WordNet's data files lie.
        expected: SHA-256 of all their sentences; default :data:`SENTENCES_SHA256`.

    Raises:
        RuntimeError: If the files are missing, or are not the text the recipe was
            chosen with (another version of the package).
    """
    return pinned_training_sentences(sentences(directory), expected or SENTENCES_SHA256,
                                     'wordnet-base 1:3.0-37')
