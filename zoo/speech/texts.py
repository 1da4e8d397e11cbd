"""What the synthetic speech corpus says: words, digit strings, template sentences.

Training texts (``vocabulary='train'``) are of three kinds, drawn with
probabilities :data:`KIND_PROBABILITIES`: one word of :data:`VOCABULARY`, a
string of 3 to 6 digits spoken as words ("three one four"), or a sentence
from one of :data:`TEMPLATES` with its ``{slots}`` filled from :data:`SLOTS`,
so that a word or character n-gram language model has structure to learn.
:data:`VOCABULARY` is every word these can produce (about 150).

Transfer texts (``vocabulary='transfer'``) are one to three words of
:data:`TRANSFER_WORDS`, words that no training text contains, for
fine-tuning on an unseen vocabulary. Every text is lowercase letters,
spaces and apostrophes only (the characters of ``ENGLISH``).
"""

import re

import numpy as np

DIGITS = ('zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine')

COMMANDS = ('yes', 'no', 'up', 'down', 'left', 'right', 'on', 'off', 'stop', 'go', 'start',
            'open', 'close', 'play', 'pause', 'next', 'back', 'call', 'help', 'cancel')

SLOTS = {
    'number': DIGITS + ('ten', 'twenty', 'thirty', 'forty', 'fifty', 'hundred'),
    'name': ('anna', 'tom', 'maria', 'john', 'lucy', 'peter', 'sarah', 'david', 'emma', 'paul'),
    'place': ('kitchen', 'garden', 'station', 'market', 'office', 'school', 'park', 'river',
              'city', 'house'),
    'thing': ('light', 'music', 'door', 'window', 'radio', 'oven', 'heater', 'camera',
              'phone', 'computer', 'fan', 'lamp'),
    'color': ('red', 'blue', 'green', 'yellow', 'black', 'white', 'brown', 'pink'),
    'animal': ('dog', 'cat', 'bird', 'horse', 'fish', 'cow', 'duck', 'goat'),
    'food': ('bread', 'apples', 'milk', 'cheese', 'coffee', 'tea', 'rice', 'soup', 'eggs',
             'butter'),
    'day': ('monday', 'tuesday', 'friday', 'sunday', 'today', 'tomorrow'),
    'command': COMMANDS,
    'shop': ('market', 'shop', 'bakery', 'pharmacy'),
}

TEMPLATES = (
    'set the alarm for {number}',
    '{name} went to the {place}',
    'turn {command} the {thing}',
    'please {command} the {thing}',
    'call {name} at {number}',
    'the {animal} is in the {place}',
    'i saw a {color} {animal}',
    '{name} likes {food}',
    'buy some {food} at the {shop}',
    'we will meet {name} on {day}',
    'the {thing} is {color}',
    'wait {number} minutes',
    'open the {thing} in the {place}',
    "it's {number} o'clock",
    "don't forget the {food}",
    'where is the {color} {thing}',
    '{name} has {number} {animal}s',
    'go to the {place} on {day}',
    'can you {command} the {thing} please',
    'my {animal} eats {food} every day',
)

KIND_PROBABILITIES = {'word': 0.25, 'digits': 0.25, 'sentence': 0.5}

TRANSFER_WORDS = (
    'banana', 'umbrella', 'violin', 'pencil', 'tiger', 'rocket', 'mountain', 'island',
    'elephant', 'guitar', 'candle', 'bottle', 'jacket', 'ladder', 'mirror', 'pillow',
    'spider', 'turtle', 'wizard', 'zebra', 'lemon', 'orange', 'planet', 'dragon', 'forest',
    'hammer', 'kitten', 'rabbit', 'sugar', 'winter', 'volcano', 'penguin')


def _template_words():
    words = set()
    for template in TEMPLATES:
        words.update(word for word in re.sub(r'\{\w+\}s?', ' ', template).split())
    return words


def _slot_names(template):
    return re.findall(r'\{(\w+)\}', template)

VOCABULARY = tuple(sorted(
    set(DIGITS) | set(COMMANDS) | _template_words()
    | {word for fillers in SLOTS.values() for word in fillers}
    | {word + 's' for word in SLOTS['animal']}))


def draw_text(rng, vocabulary='train'):
    """One text, drawn with the numpy Generator ``rng``.

    Args:
        rng: ``numpy.random.Generator``.
        vocabulary: ``'train'`` (words, digit strings, sentences) or
            ``'transfer'`` (one to three :data:`TRANSFER_WORDS`).

    Returns:
        ``(kind, text)``: kind is ``'word'``, ``'digits'``, ``'sentence'`` or
        ``'transfer'``.
    """
    if vocabulary == 'transfer':
        count = int(rng.integers(1, 4))
        return 'transfer', ' '.join(TRANSFER_WORDS[i]
                                    for i in rng.integers(0, len(TRANSFER_WORDS), count))
    if vocabulary != 'train':
        raise ValueError(f"vocabulary must be 'train' or 'transfer', got {vocabulary!r}")
    kinds = list(KIND_PROBABILITIES)
    kind = kinds[rng.choice(len(kinds), p=list(KIND_PROBABILITIES.values()))]
    if kind == 'word':
        return kind, VOCABULARY[rng.integers(len(VOCABULARY))]
    if kind == 'digits':
        count = int(rng.integers(3, 7))
        return kind, ' '.join(DIGITS[i] for i in rng.integers(0, 10, count))
    template = TEMPLATES[rng.integers(len(TEMPLATES))]
    fillers = {slot: SLOTS[slot][rng.integers(len(SLOTS[slot]))] for slot in _slot_names(template)}
    return kind, template.format(**fillers)


def lm_texts(count, seed=0):
    """``count`` training-vocabulary texts for a language model.

    They come from the same generators as the corpus's training texts but
    from their own random stream (not the transcripts of any split), so a
    language model trained on them has not seen the test transcripts.

    Args:
        count: Number of texts.
        seed: Non-negative integer.

    Returns:
        List of ``count`` strings.
    """
    rng = np.random.default_rng([seed, 0x6c6d])  # 'lm': a stream no split uses
    return [draw_text(rng)[1] for _ in range(count)]
