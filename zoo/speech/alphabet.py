"""The characters a speech model writes, and the CTC blank at index 0.

A model over an alphabet of ``n`` characters has ``n + 1`` outputs per frame:
index 0 is the CTC blank (Graves et al. 2006), which emits nothing and
separates repeated characters; index ``i >= 1`` is the alphabet's ``i``-th
character. minidl's CTC loss (:func:`minidl.functions.ctc_loss`) takes the
blank at index 0 too, so the labels of a transcript are its indices here.
"""

import numpy as np


class Alphabet:
    """Characters of transcripts, numbered from 1 (0 is the CTC blank).

    Args:
        characters: The characters in index order, no repeats; the default is
            English: space, ``a`` to ``z`` and the apostrophe (28 characters,
            29 outputs with the blank, as benchmark W5).
    """

    blank = 0

    def __init__(self, characters=" abcdefghijklmnopqrstuvwxyz'"):
        if len(set(characters)) != len(characters) or not characters:
            raise ValueError(f'an alphabet needs distinct characters, got {characters!r}')
        self.characters = characters
        self._index = {character: index + 1 for index, character in enumerate(characters)}

    def __len__(self):
        """Number of model outputs: the characters and the blank."""
        return len(self.characters) + 1

    def __repr__(self):
        return f'Alphabet({self.characters!r})'

    def normalize(self, text):
        """``text`` lowercased with runs of whitespace made one space, trimmed."""
        return ' '.join(text.lower().split())

    def encode(self, text):
        """The labels (int64, values 1 to ``len(self) - 1``) of ``normalize(text)``.

        Raises:
            ValueError: If the text has a character outside the alphabet.
        """
        text = self.normalize(text)
        unknown = sorted(set(text) - set(self._index))
        if unknown:
            raise ValueError(f'{text!r} has characters outside the alphabet: {unknown}')
        return np.array([self._index[character] for character in text], np.int64)

    def decode(self, labels):
        """The text of ``labels``; blanks (0) write nothing, repeats are kept.

        Raises:
            ValueError: If a label is outside ``[0, len(self))``.
        """
        labels = [int(label) for label in labels]
        if any(label < 0 or label >= len(self) for label in labels):
            raise ValueError(f'labels must lie in [0, {len(self)}), got {labels}')
        return ''.join(self.characters[label - 1] for label in labels if label)


ENGLISH = Alphabet()
